//! Draining: how a replica that was asked to stop leaves its sessions to the others.
//!
//! Invariants: once draining begins no new turn starts here (commands get `ShuttingDown`, and
//! their deliveries stay for another replica); a turn parked on a prompt is left at once, with
//! its prompt pending; a working turn gets until the deadline to finish, and is then left where
//! it is (no `interrupted` is written: the turn stays open and is taken up elsewhere); every
//! session lease this process holds is released afterwards, and the release is signalled, so
//! another replica takes the sessions up without waiting out the lease.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use workmate_coordinator::Signal;

use super::SessionHub;

/// How often parked turns are looked for while working ones finish.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// What a drain did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    /// Turns that finished within the grace period.
    pub finished: usize,
    /// Turns left for another replica (parked on a prompt, or still working at the deadline).
    pub left: usize,
    /// Session leases released.
    pub released: usize,
}

impl SessionHub {
    /// Stops taking turns, lets running ones finish until `deadline` (or until `now` is
    /// cancelled: a second stop signal), leaves the rest, and releases every lease held.
    pub async fn drain(&self, deadline: Instant, now: &CancellationToken) -> Drained {
        self.inner.shutdown.cancel();
        let runtimes: Vec<_> = self
            .lock_sessions()
            .iter()
            .map(|(key, runtime)| (key.clone(), runtime.clone()))
            .collect();
        let running = runtimes.iter().filter(|(_, r)| r.is_running()).count();
        if running > 0 {
            info!(turns = running, "Draining: letting running turns finish.");
        }
        let mut drained = Drained::default();
        let mut left = std::collections::HashSet::new();
        loop {
            let mut working = 0;
            for (key, runtime) in &runtimes {
                if !runtime.is_running() || left.contains(key) {
                    continue;
                }
                if runtime.is_parked() {
                    runtime.interrupt();
                    left.insert(key.clone());
                } else {
                    working += 1;
                }
            }
            if working == 0 {
                break;
            }
            if Instant::now() >= deadline || now.is_cancelled() {
                warn!(
                    turns = working,
                    "Turns still working at the end of the grace period are left for another replica to take up."
                );
                for (key, runtime) in &runtimes {
                    if runtime.interrupt() {
                        left.insert(key.clone());
                    }
                }
                break;
            }
            tokio::select! {
                () = tokio::time::sleep(LOOK_EVERY) => {}
                () = now.cancelled() => {}
            }
        }
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        for ((tenant, session), runtime) in &runtimes {
            if runtime.lease_token() == 0 {
                continue;
            }
            match self
                .store()
                .leases()
                .release(tenant, session, &self.inner.replica)
                .await
            {
                Ok(()) => {
                    drained.released += 1;
                    self.inner.deps.coordinator.signal(Signal::SessionReleased {
                        tenant: tenant.clone(),
                        session: session.clone(),
                    });
                }
                Err(e) => {
                    warn!(session = %session, error = %e, "Cannot release a session's lease; another replica takes it once it lapses.");
                }
            }
        }
        drained.left = left.len();
        drained.finished = running.saturating_sub(drained.left);
        drained
    }
}
