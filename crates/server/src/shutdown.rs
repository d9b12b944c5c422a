//! Turning SIGTERM and Ctrl-C into a drain, and a second one into a stop now.
//!
//! Invariants: the first stop signal cancels [`Stop::token`] exactly once and records when;
//! a second cancels [`Stop::now`] (the drain stops waiting for running turns); the listening
//! task also ends when the token is cancelled some other way, so it can always be joined.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// A stop request and its urgency.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// Cancelled by the first stop signal: drain.
    pub token: CancellationToken,
    /// Cancelled by a second one: stop waiting for running turns.
    pub now: CancellationToken,
    asked_at: Arc<OnceLock<Instant>>,
}

impl Stop {
    /// A stop nobody asked for yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// When a drain that may take `grace` from the stop request must be over (from now, if the
    /// stop came some other way than a signal).
    pub fn deadline(&self, grace: Duration) -> Instant {
        *self.asked_at.get_or_init(Instant::now) + grace
    }
}

/// Spawns the task that turns stop signals into `stop`. Join it after cancelling.
pub fn spawn_signal_listener(stop: Stop) -> JoinHandle<()> {
    tokio::spawn(async move {
        tokio::select! {
            signal = stop_signal() => {
                let _ = stop.asked_at.set(Instant::now());
                info!(signal, "Shutting down: draining (a second signal stops at once).");
                stop.token.cancel();
            }
            () = stop.token.cancelled() => {}
        }
        tokio::select! {
            signal = stop_signal() => {
                warn!(signal, "Second stop signal: running turns are left for another replica now.");
                stop.now.cancel();
            }
            () = stop.now.cancelled() => {}
        }
    })
}

/// Resolves with the signal's name when a stop signal arrives.
async fn stop_signal() -> &'static str {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            warn!(error = %e, "Cannot listen for Ctrl-C.");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(e) => {
                warn!(error = %e, "Cannot listen for SIGTERM.");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => "SIGINT",
        () = terminate => "SIGTERM",
    }
}
