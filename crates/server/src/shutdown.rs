//! Turning SIGTERM and Ctrl-C into a cancellation.
//!
//! Invariant: the first stop signal cancels the token exactly once; the listening task also ends
//! when the token is cancelled some other way, so it can always be joined.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// Spawns the task that cancels `token` on SIGTERM or Ctrl-C. Join it after cancelling.
pub fn spawn_signal_listener(token: CancellationToken) -> JoinHandle<()> {
    tokio::spawn(async move {
        tokio::select! {
            signal = stop_signal() => {
                info!(signal, "Shutting down.");
                token.cancel();
            }
            () = token.cancelled() => {}
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
