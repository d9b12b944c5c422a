//! The Stream connection of one app: open, connect, serve, reconnect, until stopped.

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio_util::sync::CancellationToken;
use workmate_adapter::backoff::Backoff;

use super::dial::{Dialer, Ws, close};
use super::dispatch::Dispatcher;
use super::error::Error;
use super::handler::StreamHandler;
use super::session::{self, Ended};

/// The client's waits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timings {
    /// Between WebSocket pings: 60 s, as the Python SDK.
    pub ping_every: Duration,
    /// How long `open` and the WebSocket upgrade together may take.
    pub connect_timeout: Duration,
    /// The first wait after a failed attempt or a lost connection: 1 s, doubling each time.
    pub backoff_first: Duration,
    /// The longest wait between attempts: 60 s.
    pub backoff_max: Duration,
    /// On stop, how long handlers already running may take to finish (and have their acks
    /// written) before they are cut.
    pub drain: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            ping_every: Duration::from_secs(60),
            connect_timeout: workmate_adapter::net::CALL_TIMEOUT,
            backoff_first: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            drain: Duration::from_secs(3),
        }
    }
}

/// The DingTalk Stream mode client of one app: receives events, robot messages and card
/// callbacks over a WebSocket the app opens, instead of DingTalk POSTing them to a public URL.
#[derive(Debug)]
pub struct StreamClient {
    dialer: Dialer,
    timings: Timings,
}

impl StreamClient {
    /// A client of app `client_id` (the AppKey) against the API at `api_base`
    /// (`https://api.dingtalk.com`).
    pub fn new(
        api_base: &str,
        client_id: &str,
        client_secret: SecretString,
    ) -> Result<Self, Error> {
        let http = workmate_adapter::net::http_client().map_err(Error::Setup)?;
        let tls = workmate_adapter::net::tls_config().map_err(Error::Setup)?;
        Ok(Self {
            dialer: Dialer {
                http,
                tls: Arc::new(tls),
                api_base: api_base.to_owned(),
                client_id: client_id.to_owned(),
                client_secret,
            },
            timings: Timings::default(),
        })
    }

    /// The app it connects as.
    pub fn client_id(&self) -> &str {
        &self.dialer.client_id
    }

    /// The same client with other waits.
    #[must_use]
    pub fn with_timings(mut self, timings: Timings) -> Self {
        self.timings = timings;
        self
    }

    /// Connects and hands every EVENT and CALLBACK message to `handler` until `stop` fires,
    /// reconnecting (with a new `open`) whenever the connection is lost or DingTalk asks.
    ///
    /// Returns `Ok(())` once stopped, with the socket closed and every handler finished or
    /// cut after [`Timings::drain`]. A refused `open` ([`Error::Refused`]) is logged at error
    /// level with what to fix and retried at the backoff's pace, so `run` only ends on stop.
    pub async fn run(
        &self,
        handler: Arc<dyn StreamHandler>,
        stop: CancellationToken,
    ) -> Result<(), Error> {
        let mut dispatcher = Dispatcher::new(handler);
        let mut backoff = Backoff::new(self.timings.backoff_first, self.timings.backoff_max);
        let mut wait = Duration::ZERO;
        // A connection DingTalk asked to leave, closed once its successor is dialed.
        let mut old: Option<Box<Ws>> = None;
        loop {
            if !wait.is_zero() {
                let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
                tracing::info!(wait_ms, "DingTalk Stream connection will reconnect.");
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(wait) => {}
                }
            }
            let dialed = tokio::select! {
                () = stop.cancelled() => break,
                dialed = tokio::time::timeout(self.timings.connect_timeout, self.dialer.dial()) => {
                    dialed.unwrap_or_else(|_| Err(Error::Unavailable("connecting timed out".to_owned())))
                }
            };
            if let Some(ws) = old.take() {
                close(*ws).await;
            }
            let ws = match dialed {
                Ok(ws) => ws,
                Err(error) => {
                    wait = backoff.failed();
                    if error.is_retryable() {
                        tracing::warn!(%error, "DingTalk Stream connection failed.");
                    } else {
                        tracing::error!(%error, "DingTalk Stream connection refused.");
                    }
                    continue;
                }
            };
            tracing::info!(client_id = %self.dialer.client_id, "DingTalk Stream connection open.");
            match session::run(ws, &mut dispatcher, &self.timings, &stop).await {
                Ended::Stopped => break,
                Ended::Replace { ws } => {
                    backoff.reset();
                    old = Some(ws);
                    wait = Duration::ZERO;
                }
                Ended::Lost { healthy } => {
                    if healthy {
                        backoff.reset();
                    }
                    wait = backoff.failed();
                }
            }
        }
        if let Some(ws) = old {
            close(*ws).await;
        }
        // No connection to ack on: let running handlers finish, then cut the rest.
        let _ = tokio::time::timeout(self.timings.drain, async {
            while dispatcher.next_ack().await.is_some() {}
        })
        .await;
        dispatcher.abort().await;
        tracing::info!("DingTalk Stream connection stopped.");
        Ok(())
    }
}
