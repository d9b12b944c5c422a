//! `workmate serve`: the startup sequence and the server's lifetime.
//!
//! Invariant: checks run cheapest-and-config-class first (the listener is bound, then the data
//! directory checked, before anything is created), so a bad configuration creates nothing; after
//! a stop signal in-flight requests get at most the grace period, then the pool is closed and
//! every spawned task joined before returning.

use std::future::IntoFuture;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use workmate_store::Store;

use crate::config::Config;
use crate::error::StartupError;
use crate::http::{AppState, router};
use crate::metrics::Metrics;
use crate::{data_dir, database, shutdown};

/// Runs the server until SIGTERM or Ctrl-C.
pub async fn serve(config: &Config) -> Result<(), StartupError> {
    let listener = bind(config.server.listen).await?;
    data_dir::prepare(&config.server.data_dir)?;
    // Listening for signals from here on means a stop request during a long migration is honoured
    // once it finishes, with exit code 0, instead of killing the process mid-way.
    let token = CancellationToken::new();
    let signals = shutdown::spawn_signal_listener(token.clone());
    let outcome = open_and_run(listener, config, token.clone()).await;
    token.cancel();
    if let Err(e) = signals.await {
        warn!(error = %e, "The signal listener ended abnormally.");
    }
    outcome
}

async fn open_and_run(
    listener: TcpListener,
    config: &Config,
    token: CancellationToken,
) -> Result<(), StartupError> {
    let store = database::open(config).await?;
    let report = database::migrate(&store, config).await?;
    info!(
        database = %config.database.url.redacted(),
        applied = report.applied.len(),
        already_applied = report.already_applied,
        "Database ready."
    );
    let outcome = if token.is_cancelled() {
        Ok(())
    } else {
        run(listener, store.clone(), config.server.shutdown_grace, token).await
    };
    store.close().await;
    info!("Stopped.");
    outcome
}

/// Serves on `listener` until `shutdown` is cancelled, then waits up to `grace` for in-flight
/// requests. Does not close the store.
pub async fn run(
    listener: TcpListener,
    store: Store,
    grace: Duration,
    shutdown: CancellationToken,
) -> Result<(), StartupError> {
    let address = listener.local_addr().map_err(StartupError::Serve)?;
    let app = router(AppState {
        store,
        metrics: Arc::new(Metrics::new()),
    });
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.clone().cancelled_owned())
        .into_future();
    let mut server = std::pin::pin!(server);
    info!(%address, "Listening.");
    tokio::select! {
        result = &mut server => result.map_err(StartupError::Serve),
        () = shutdown.cancelled() => match tokio::time::timeout(grace, &mut server).await {
            Ok(result) => result.map_err(StartupError::Serve),
            Err(_) => {
                let grace_ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
                warn!(grace_ms, "Requests still running after the grace period were dropped.");
                Ok(())
            }
        },
    }
}

/// Binds the listen address; every failure here is a configuration problem.
async fn bind(addr: SocketAddr) -> Result<TcpListener, StartupError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| StartupError::Listen {
            addr,
            reason: match e.kind() {
                io::ErrorKind::AddrInUse => "address already in use".to_owned(),
                io::ErrorKind::AddrNotAvailable => {
                    "no network interface has this address".to_owned()
                }
                io::ErrorKind::PermissionDenied => {
                    "permission denied (ports below 1024 need privileges)".to_owned()
                }
                _ => e.to_string(),
            },
        })
}
