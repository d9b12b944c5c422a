//! The long connection of one bot: connect, subscribe, serve, reconnect, until stopped.
//!
//! Invariants: one `run` at a time per client (WeCom keeps one connection per bot id, so a
//! second would kick the first); the senders see a connection only while it is subscribed;
//! after a refusal or a `disconnected_event` the next attempt waits long, otherwise the
//! backoff goes from [`Timings::backoff_first`] to [`Timings::backoff_max`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use secrecy::SecretString;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use workmate_adapter::backoff::{Backoff, jitter};

use super::dial::Dialer;
use super::dispatch::Dispatcher;
use super::error::Error;
use super::handler::FrameHandler;
use super::outbox::OUTBOX;
use super::sender::{Sender, Shared};
use super::session::{self, Ended};
use super::status::Status;

/// WeCom's long-connection endpoint.
pub const WECOM_WS_URL: &str = "wss://openws.work.weixin.qq.com";

/// The client's waits. Tests shrink them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timings {
    /// Between pings: 30 s.
    pub ping_every: Duration,
    /// Opening the WebSocket and having the subscription answered.
    pub connect_timeout: Duration,
    /// How long a sent frame waits for WeCom's answer.
    pub ack_timeout: Duration,
    /// How long a sent frame waits for a subscribed connection before failing.
    pub send_wait: Duration,
    /// The first wait after a failed attempt or a lost connection: 1 s.
    pub backoff_first: Duration,
    /// The longest such wait: 30 s.
    pub backoff_max: Duration,
    /// The wait after WeCom refused the subscription (a configuration error).
    pub refused_wait: Duration,
    /// The wait after a `disconnected_event` (another process holds the bot).
    pub replaced_wait: Duration,
    /// On stop, how long running handlers may take to finish before they are cut.
    pub drain: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            ping_every: Duration::from_secs(30),
            connect_timeout: workmate_adapter::net::CONNECT_TIMEOUT,
            ack_timeout: Duration::from_secs(10),
            // With `ack_timeout`, a send takes at most the adapters' CALL_TIMEOUT of 30 s.
            send_wait: Duration::from_secs(20),
            backoff_first: Duration::from_secs(1),
            backoff_max: Duration::from_secs(30),
            refused_wait: Duration::from_secs(5 * 60),
            replaced_wait: Duration::from_secs(10 * 60),
            drain: Duration::from_secs(3),
        }
    }
}

/// The WeCom smart robot's long connection: receives its callbacks over a WebSocket the
/// process opens, instead of WeCom POSTing them to a public URL, and sends its replies back on
/// the same socket.
#[derive(Debug)]
pub struct LongConnection {
    dialer: Dialer,
    timings: Timings,
    shared: Arc<Shared>,
    running: AtomicBool,
}

impl LongConnection {
    /// A client of bot `bot_id` against `url` ([`WECOM_WS_URL`], or a `ws://` test server).
    pub fn new(url: &str, bot_id: &str, secret: SecretString) -> Result<Self, Error> {
        if !(url.starts_with("wss://") || url.starts_with("ws://")) {
            return Err(Error::Setup(format!(
                "the long-connection URL must start with wss:// ({WECOM_WS_URL}), or ws:// for \
                 a local test server; got {url:?}"
            )));
        }
        let tls = workmate_adapter::net::tls_config().map_err(Error::Setup)?;
        Ok(Self {
            dialer: Dialer {
                url: url.to_owned(),
                bot_id: bot_id.to_owned(),
                secret,
                tls: Arc::new(tls),
            },
            timings: Timings::default(),
            shared: Arc::new(Shared::new()),
            running: AtomicBool::new(false),
        })
    }

    /// The same client with other waits. Take senders after this.
    #[must_use]
    pub fn with_timings(mut self, timings: Timings) -> Self {
        self.timings = timings;
        self
    }

    /// The bot it subscribes.
    pub fn bot_id(&self) -> &str {
        &self.dialer.bot_id
    }

    /// A sender of frames over this client's connections, valid across reconnections.
    pub fn sender(&self) -> Sender {
        Sender::new(Arc::clone(&self.shared), &self.timings)
    }

    /// What the connection is doing, as it changes.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.shared.status.subscribe()
    }

    /// Connects, subscribes, pings, and hands every callback to `handler` until `stop` fires,
    /// reconnecting whenever the connection is lost or refused.
    ///
    /// Returns `Ok(())` once stopped, with the socket closed and every handler finished or cut
    /// after [`Timings::drain`], or [`Error::AlreadyRunning`] at once when this client already
    /// runs. Failures do not end it: they show in [`status`](Self::status) and the logs, and
    /// the next attempt follows the backoff.
    pub async fn run(
        &self,
        handler: Arc<dyn FrameHandler>,
        stop: CancellationToken,
    ) -> Result<(), Error> {
        if self.running.swap(true, Ordering::SeqCst) {
            return Err(Error::AlreadyRunning);
        }
        let _running = Running {
            flag: &self.running,
            shared: &self.shared,
        };
        let mut dispatcher = Dispatcher::new(handler);
        let drained = self.serve(&mut dispatcher, &stop).await;
        self.shared.link.send_replace(None);
        // Sends still waiting fail now instead of waiting for a connection that will not come.
        self.shared.status.send_replace(Status::Stopped);
        if !drained {
            let _ = tokio::time::timeout(self.timings.drain, async {
                while !dispatcher.is_idle() {
                    dispatcher.join_next().await;
                }
            })
            .await;
        }
        dispatcher.abort().await;
        tracing::info!(bot_id = %self.dialer.bot_id, "WeCom long connection stopped.");
        Ok(())
    }

    /// Connects and reconnects until `stop` fires. `true` when it fired on a connection, whose
    /// session already gave the handlers their drain.
    async fn serve(&self, dispatcher: &mut Dispatcher, stop: &CancellationToken) -> bool {
        let timings = &self.timings;
        let mut backoff = Backoff::new(timings.backoff_first, timings.backoff_max);
        let mut wait = Duration::ZERO;
        loop {
            if !wait.is_zero() {
                tokio::select! {
                    () = stop.cancelled() => return false,
                    () = tokio::time::sleep(wait) => {}
                }
            }
            self.shared.status.send_replace(Status::Connecting);
            let dialed = tokio::select! {
                () = stop.cancelled() => return false,
                dialed = tokio::time::timeout(timings.connect_timeout, self.dialer.dial()) => {
                    dialed.unwrap_or_else(|_| Err(Error::Unavailable(format!(
                        "connecting and subscribing took longer than {:?}",
                        timings.connect_timeout
                    ))))
                }
            };
            let (error, healthy) = match dialed {
                Ok(ws) => {
                    let bot_id = self.dialer.bot_id.as_str();
                    tracing::info!(%bot_id, "WeCom long connection open and subscribed.");
                    let (outbox, writer) = mpsc::channel(OUTBOX);
                    self.shared.link.send_replace(Some(outbox));
                    self.shared.status.send_replace(Status::Online);
                    let ended = session::run(ws, writer, dispatcher, timings, stop).await;
                    self.shared.link.send_replace(None);
                    match ended {
                        Ended::Stopped => return true,
                        Ended::Replaced => (Error::Replaced, true),
                        Ended::Lost { reason, healthy } => (Error::Unavailable(reason), healthy),
                    }
                }
                Err(error) => (error, false),
            };
            wait = self.wait_after(&error, healthy, &mut backoff);
            self.shared.status.send_replace(Status::Waiting {
                error,
                retry_in: wait,
            });
        }
    }

    /// Logs why the connection is down, and gives the wait before the next attempt.
    /// `healthy`: the connection lost had worked, so the backoff starts over.
    fn wait_after(&self, error: &Error, healthy: bool, backoff: &mut Backoff) -> Duration {
        let bot_id = self.dialer.bot_id.as_str();
        if healthy {
            backoff.reset();
        }
        match error {
            Error::Refused { .. } => {
                let wait = jitter(self.timings.refused_wait);
                tracing::error!(
                    %bot_id, %error, wait_s = wait.as_secs(),
                    "WeCom refused the subscription; retrying only after a long wait."
                );
                wait
            }
            Error::Replaced => {
                let wait = jitter(self.timings.replaced_wait);
                tracing::warn!(
                    %bot_id, wait_s = wait.as_secs(),
                    "WeCom replaced this long connection with a newer one for the same bot \
                     (disconnected_event): another process holds the bot. Reconnecting only \
                     after a long wait; run the connection in one replica."
                );
                wait
            }
            Error::Unavailable(_) | Error::Setup(_) | Error::AlreadyRunning => {
                let wait = backoff.failed();
                tracing::warn!(
                    %bot_id, %error, wait_ms = millis(wait),
                    "WeCom long connection down; reconnecting."
                );
                wait
            }
        }
    }
}

fn millis(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)
}

/// When `run` ends or its future is dropped: no connection for the senders, the status
/// stopped, and the client free to run again.
#[derive(Debug)]
struct Running<'a> {
    flag: &'a AtomicBool,
    shared: &'a Shared,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.shared.link.send_replace(None);
        self.shared.status.send_if_modified(|status| {
            let was_stopped = *status == Status::Stopped;
            *status = Status::Stopped;
            !was_stopped
        });
        self.flag.store(false, Ordering::SeqCst);
    }
}
