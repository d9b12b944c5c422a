//! The long connection of one app: connect, serve, reconnect, until stopped.

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::dial::{Dialer, Ws, close};
use super::dispatch::Dispatcher;
use super::endpoint::ClientConfig;
use super::error::Error;
use super::handler::FrameHandler;
use super::session::{self, Ended};

/// The client's own waits. The server's [`ClientConfig`] sets the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timings {
    /// How long one second of the server's [`ClientConfig`] lasts: 1 s. Tests shrink it so
    /// pings and reconnections come within milliseconds.
    pub config_second: Duration,
    /// How long discovery and the WebSocket upgrade together may take.
    pub connect_timeout: Duration,
    /// On stop, how long handlers already running may take to finish (and, while the
    /// connection is open, have their acks written) before they are cut.
    pub drain: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            config_second: Duration::from_secs(1),
            connect_timeout: workmate_adapter::net::CALL_TIMEOUT,
            drain: Duration::from_secs(3),
        }
    }
}

/// The Feishu long connection of one app: receives events and card callbacks over a WebSocket
/// the app opens, instead of Feishu POSTing them to a public URL.
#[derive(Debug)]
pub struct LongConnection {
    dialer: Dialer,
    timings: Timings,
}

impl LongConnection {
    /// A client of app `app_id` against the open platform at `base_url`
    /// (`https://open.feishu.cn` or `https://open.larksuite.com`).
    pub fn new(base_url: &str, app_id: &str, app_secret: SecretString) -> Result<Self, Error> {
        let http = workmate_adapter::net::http_client().map_err(Error::Setup)?;
        let tls = workmate_adapter::net::tls_config().map_err(Error::Setup)?;
        Ok(Self {
            dialer: Dialer {
                http,
                tls: Arc::new(tls),
                base_url: base_url.to_owned(),
                app_id: app_id.to_owned(),
                app_secret,
            },
            timings: Timings::default(),
        })
    }

    /// The app it connects as.
    pub fn app_id(&self) -> &str {
        &self.dialer.app_id
    }

    /// The same client with other waits.
    #[must_use]
    pub fn with_timings(mut self, timings: Timings) -> Self {
        self.timings = timings;
        self
    }

    /// Connects and hands every data payload to `handler` until `stop` fires, reconnecting
    /// whenever the connection is lost.
    ///
    /// Returns `Ok(())` once stopped, with the socket closed and every handler finished or
    /// cut after [`Timings::drain`]. Returns an error when Feishu refused the app
    /// ([`Error::Refused`]: fix the credentials or the app's settings, then run again) or when
    /// reconnection failed more often in a row than the server's `ReconnectCount` allows.
    pub async fn run(
        &self,
        handler: Arc<dyn FrameHandler>,
        stop: CancellationToken,
    ) -> Result<(), Error> {
        let mut dispatcher = Dispatcher::new(handler);
        let mut config = ClientConfig::default();
        let mut backoff = Backoff::new(self.timings.config_second);
        let mut wait = Duration::ZERO;
        // A replaced connection, closed once its successor is open (or failed to open).
        let mut old: Option<Box<Ws>> = None;
        let result = loop {
            if !wait.is_zero() {
                let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
                tracing::info!(wait_ms, "Feishu long connection will reconnect.");
                tokio::select! {
                    () = stop.cancelled() => break Ok(()),
                    () = tokio::time::sleep(wait) => {}
                }
            }
            let dialed = tokio::select! {
                () = stop.cancelled() => break Ok(()),
                dialed = tokio::time::timeout(self.timings.connect_timeout, self.dialer.dial()) => {
                    dialed.unwrap_or_else(|_| Err(Error::Unavailable("connecting timed out".to_owned())))
                }
            };
            if let Some(ws) = old.take() {
                close(*ws).await;
            }
            let link = match dialed {
                Ok(link) => link,
                Err(error) if !error.is_retryable() => {
                    tracing::error!(%error, "Feishu long connection refused; not retrying.");
                    break Err(error);
                }
                Err(error) => {
                    tracing::warn!(%error, "Feishu long connection failed.");
                    match backoff.failed(&config) {
                        Some(next) => wait = next,
                        None => break Err(Error::GaveUp(backoff.failures())),
                    }
                    continue;
                }
            };
            config.apply(link.config);
            tracing::info!(device_id = %link.device_id, "Feishu long connection open.");
            let (healthy, replaced) = match session::run(
                link,
                &mut dispatcher,
                &mut config,
                &self.timings,
                &stop,
            )
            .await
            {
                Ended::Stopped => break Ok(()),
                Ended::Lost { healthy } => (healthy, None),
                Ended::Replace { ws, healthy } => (healthy, Some(ws)),
            };
            old = replaced;
            if healthy {
                wait = backoff.dropped(&config);
            } else {
                // Opened but never answered: as good as a failed attempt.
                match backoff.failed(&config) {
                    Some(next) => wait = next,
                    None => break Err(Error::GaveUp(backoff.failures())),
                }
            }
        };
        if let Some(ws) = old {
            close(*ws).await;
        }
        // No connection to ack on: let running handlers finish storing, then cut the rest.
        let _ = tokio::time::timeout(self.timings.drain, async {
            while dispatcher.next_ack().await.is_some() {}
        })
        .await;
        dispatcher.abort().await;
        tracing::info!("Feishu long connection stopped.");
        result
    }
}
