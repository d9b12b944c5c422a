//! Long connections held by one replica at a time: [`Chat::hold`].
//!
//! A platform connection that must be open at most once per app (the Feishu long connection,
//! Slack Socket Mode) runs only while this process holds its lease in the database. Every replica
//! asks for the lease; the one that gets it opens the connection and renews the lease while it
//! runs; the others keep asking, and one of them takes over when the holder shuts down (it
//! releases the lease) or dies (its lease lapses).
//!
//! Invariants: the connection runs only under a lease this process took or renewed less than one
//! lease term ago; a renewal that fails, or finds the lease taken, closes the connection before the
//! term ends, so two replicas never hold it beyond the clock skew between them; closing releases
//! the lease, so a successor starts without waiting out the term; and says so through the
//! coordinator, so a waiting replica takes it at once rather than at its next ask.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workmate_adapter::{Connection, InboundSink};
use workmate_engine::{Coordinator, Signal};
use workmate_store::Store;

use crate::Chat;

/// A connection opened by [`Chat::hold`]; [`HeldConnection::close`] stops it.
#[derive(Debug)]
pub struct HeldConnection {
    stop: CancellationToken,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl HeldConnection {
    /// Closes the connection (if this process holds it) and releases its lease. A second call
    /// does nothing.
    pub async fn close(&self) {
        self.stop.cancel();
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task
            && let Err(e) = task.await
        {
            tracing::warn!(error = %e, "A long connection's task failed.");
        }
    }
}

impl Chat {
    /// Runs `connection` whenever this process holds its lease, handing what it receives to this
    /// chat layer. The lease lasts [`crate::ChatConfig::connection_lease`] and is renewed every
    /// third of it. Must be called inside a tokio runtime.
    pub fn hold(&self, connection: Arc<dyn Connection>) -> HeldConnection {
        let stop = CancellationToken::new();
        let holder = Holder {
            store: self.inner.store.clone(),
            name: connection.lease_name(),
            replica: self.inner.hub.config().replica.clone(),
            term: self.inner.config.connection_lease,
            connection,
            sink: Arc::new(self.clone()),
            stop: stop.clone(),
            coordinator: Arc::clone(self.inner.hub.coordinator()),
        };
        HeldConnection {
            stop,
            task: Mutex::new(Some(tokio::spawn(holder.run()))),
        }
    }
}

/// How long after another's lease should lapse it is asked for again.
const LAPSE_MARGIN_MS: i64 = 25;

/// What a take of the lease found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lease {
    /// This process holds it for another term.
    Held,
    /// Another replica's lease is live.
    Elsewhere,
    /// The database could not be asked.
    Unknown,
}

/// One connection's lease loop.
struct Holder {
    store: Store,
    name: String,
    replica: String,
    term: Duration,
    connection: Arc<dyn Connection>,
    sink: Arc<dyn InboundSink>,
    stop: CancellationToken,
    coordinator: Arc<dyn Coordinator>,
}

impl Holder {
    async fn run(self) {
        let every = self.term / 3;
        let mut released = self.coordinator.signals();
        loop {
            let asked = Instant::now();
            let lease = self.take().await;
            if lease == Lease::Held {
                self.drive(asked, every).await;
                match self
                    .store
                    .connection_leases()
                    .release(&self.name, &self.replica)
                    .await
                {
                    Ok(()) => self.coordinator.signal(Signal::ConnectionReleased {
                        name: self.name.clone(),
                        by: self.replica.clone(),
                    }),
                    Err(e) => {
                        tracing::warn!(connection = %self.name, error = %e, "Cannot release the lease of a long connection; another replica takes it once it lapses.");
                    }
                }
            }
            // Asked again every third of a term, when another's lease runs out (so a dead
            // holder's successor opens it within one term), or at once when its holder says it
            // let go.
            let wait = match lease {
                Lease::Elsewhere => self.until_it_lapses().await.min(every),
                Lease::Held | Lease::Unknown => every,
            };
            let wait = tokio::time::sleep(wait);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    () = self.stop.cancelled() => return,
                    () = &mut wait => break,
                    signal = released.recv() => match signal {
                        Ok(Signal::ConnectionReleased { name, by })
                            if name == self.name && by != self.replica => break,
                        Ok(_) | Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => {
                            wait.as_mut().await;
                            break;
                        }
                    },
                }
            }
        }
    }

    /// Takes or renews the lease.
    async fn take(&self) -> Lease {
        let until = self.store.clock_ms().saturating_add(millis(self.term));
        match self
            .store
            .connection_leases()
            .take(&self.name, &self.replica, until)
            .await
        {
            Ok(Some(_)) => Lease::Held,
            Ok(None) => Lease::Elsewhere,
            Err(e) => {
                tracing::warn!(connection = %self.name, error = %e, "Cannot take or renew the lease of a long connection.");
                Lease::Unknown
            }
        }
    }

    /// How long until another holder's lease lapses, unless renewed (a little after, so the
    /// next take finds it lapsed); a term when it cannot be read.
    async fn until_it_lapses(&self) -> Duration {
        match self.store.connection_leases().get(&self.name).await {
            Ok(Some(lease)) => {
                let left = lease.until_ms.saturating_sub(self.store.clock_ms()) + LAPSE_MARGIN_MS;
                Duration::from_millis(u64::try_from(left.max(LAPSE_MARGIN_MS)).unwrap_or(0))
            }
            Ok(None) | Err(_) => self.term,
        }
    }

    /// Runs the connection while the lease (taken by a request sent at `taken`) is renewed,
    /// until stopped or the lease is lost.
    async fn drive(&self, taken: Instant, every: Duration) {
        tracing::info!(connection = %self.name, replica = %self.replica, "This replica holds the long connection.");
        let stop = self.stop.child_token();
        let mut run =
            tokio::spawn(Arc::clone(&self.connection).run(Arc::clone(&self.sink), stop.clone()));
        // The lease runs out a term after the last successful take was asked for (the database
        // computed its end no earlier); the connection closes before that.
        let mut lapses = taken + self.term;
        loop {
            tokio::select! {
                () = self.stop.cancelled() => break,
                ended = &mut run => {
                    if let Err(e) = ended {
                        tracing::warn!(connection = %self.name, error = %e, "A long connection's task failed; opening it again.");
                    }
                    return;
                }
                () = tokio::time::sleep(every) => {
                    let asked = Instant::now();
                    match self.take().await {
                        Lease::Held => lapses = asked + self.term,
                        Lease::Elsewhere => {
                            tracing::warn!(connection = %self.name, "Another replica holds the long connection's lease now; closing it here.");
                            break;
                        }
                        // Keep it while the lease surely lasts; one more failed renewal could
                        // outlive it.
                        Lease::Unknown if Instant::now() + every >= lapses => {
                            tracing::warn!(connection = %self.name, "Cannot renew the long connection's lease before it lapses; closing it.");
                            break;
                        }
                        Lease::Unknown => {}
                    }
                }
            }
        }
        stop.cancel();
        if let Err(e) = run.await {
            tracing::warn!(connection = %self.name, error = %e, "A long connection's task failed.");
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
