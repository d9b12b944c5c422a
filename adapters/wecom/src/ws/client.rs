//! The long connection of one bot, as a [`Protocol`] of the kit's supervisor: dial and
//! subscribe, callbacks to the handler, the senders' frames out and WeCom's answers matched to
//! them, pings by `req_id`.
//!
//! Invariants: one `run` at a time per client (WeCom keeps one connection per bot id, so a
//! second would kick the first); the senders see a connection only while it is subscribed; an
//! answer goes to the frame written with its `req_id`; when [`MISSED_PINGS`] pings in a row are
//! unanswered the link is dead; after a refusal or a `disconnected_event` the next attempt
//! waits long, otherwise the backoff goes from [`Timings::backoff_first`] to
//! [`Timings::backoff_max`].

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use secrecy::{ExposeSecret as _, SecretString};
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use workmate_adapter::backoff::{Backoff, jitter};
use workmate_adapter::ws::{self, Connector, Ended, Message, Protocol, Read, Settings, Ws};

use super::error::Error;
use super::frame::{self, Inbound, PING, SUBSCRIBE};
use super::sender::{Answer, OUTBOX, Outcome, Outgoing, Sender, Shared};
use super::{FrameHandler, Status};

/// WeCom's long-connection endpoint.
pub const WECOM_WS_URL: &str = "wss://openws.work.weixin.qq.com";
/// The most handler calls running at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// The most callbacks waiting for a running slot.
pub const MAX_WAITING: usize = 256;
/// Pings in a row left unanswered after which the connection is presumed dead.
pub const MISSED_PINGS: u32 = 2;
/// Written frames whose answer may still come; past it, the ones nobody waits for are dropped.
const PENDING_SWEEP: usize = 1024;

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
    connector: Connector,
    url: String,
    bot_id: String,
    secret: SecretString,
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
        Ok(Self {
            connector: Connector::new().map_err(Error::Setup)?,
            url: url.to_owned(),
            bot_id: bot_id.to_owned(),
            secret,
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
        &self.bot_id
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
        let _running = Running(self);
        let timings = &self.timings;
        let settings = Settings {
            connect_timeout: timings.connect_timeout,
            drain: timings.drain,
            max_in_flight: MAX_IN_FLIGHT,
            max_waiting: Some(MAX_WAITING),
        };
        let mut session = Session {
            client: self,
            handler,
            backoff: Backoff::new(timings.backoff_first, timings.backoff_max),
            outbox: None,
            pending: HashMap::new(),
            pings: VecDeque::new(),
            unanswered: 0,
        };
        ws::supervise(&mut session, &settings, &self.shared.status, &stop).await
    }
}

/// When `run` ends or its future is dropped: no connection for the senders, and the client
/// free to run again.
struct Running<'a>(&'a LongConnection);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.shared.link.send_replace(None);
        self.0.running.store(false, Ordering::SeqCst);
    }
}

/// One run of a [`LongConnection`], and the state of its current connection.
struct Session<'a> {
    client: &'a LongConnection,
    handler: Arc<dyn FrameHandler>,
    backoff: Backoff,
    /// The senders' frames for the current connection.
    outbox: Option<mpsc::Receiver<Outgoing>>,
    /// Written frames waiting for their answer, by `req_id`.
    pending: HashMap<String, oneshot::Sender<Outcome>>,
    /// The latest pings' `req_id`s.
    pings: VecDeque<String>,
    /// Pings in a row not answered.
    unanswered: u32,
}

impl Protocol for Session<'_> {
    type Error = Error;
    const NAME: &'static str = "WeCom long connection";

    /// Opens a WebSocket and subscribes the bot on it; then the senders may use it.
    async fn dial(&mut self) -> Result<Ws, Error> {
        let c = self.client;
        let ws = c.connector.open(&c.url).await;
        let mut ws =
            ws.map_err(|e| Error::Unavailable(format!("connecting to {} failed: {e}", c.url)))?;
        if let Err(error) = subscribe(&mut ws, &c.bot_id, &c.secret).await {
            ws::close(ws).await;
            return Err(error);
        }
        let (outbox, frames) = mpsc::channel(OUTBOX);
        (self.outbox, self.unanswered) = (Some(frames), 0);
        self.pings.clear();
        c.shared.link.send_replace(Some(outbox));
        Ok(ws)
    }

    fn unavailable(reason: String) -> Error {
        Error::Unavailable(reason)
    }

    fn ping_every(&self) -> Option<Duration> {
        Some(self.client.timings.ping_every)
    }

    /// A ping, unless the last ones went unanswered.
    fn ping(&mut self) -> Result<Option<Message>, String> {
        if self.unanswered >= MISSED_PINGS {
            return Err(format!(
                "{MISSED_PINGS} pings in a row were not answered; the link is dead"
            ));
        }
        let req_id = frame::new_req_id(PING);
        let text = frame::encode(PING, &req_id, None);
        self.pings.push_back(req_id);
        if self.pings.len() > MISSED_PINGS as usize + 1 {
            self.pings.pop_front();
        }
        self.unanswered += 1;
        Ok(Some(Message::text(text)))
    }

    /// A sender's frame, kept until its answer.
    async fn outbound(&mut self) -> Option<Message> {
        let frames = self.outbox.as_mut()?;
        loop {
            let Outgoing {
                req_id,
                text,
                outcome,
            } = frames.recv().await?;
            // Its sender gave up waiting before it was written.
            if outcome.is_closed() {
                continue;
            }
            if self.pending.len() >= PENDING_SWEEP {
                self.pending.retain(|_, waiting| !waiting.is_closed());
            }
            // An older frame with this req_id whose answer never came is given up: its sender
            // timed out, which is what let this one go.
            self.pending.insert(req_id, outcome);
            return Some(Message::text(text));
        }
    }

    /// A callback, or an answer.
    fn read(&mut self, message: Message) -> Read<Error> {
        let Message::Text(text) = message else {
            return Read::Skip;
        };
        let mut frame = match Inbound::parse(&text) {
            Ok(frame) => frame,
            Err(error) => {
                tracing::warn!(%error, "WeCom frame unreadable; ignored.");
                return Read::Skip;
            }
        };
        let req_id = std::mem::take(&mut frame.headers.req_id);
        if frame.is_disconnected_event() {
            return Read::End(Error::Replaced);
        }
        if frame.is_callback() {
            let handler = Arc::clone(&self.handler);
            return Read::Deliver(Box::pin(async move {
                handler.handle(&frame.cmd, &req_id, frame.body).await;
                None
            }));
        }
        let errcode = frame.errcode.unwrap_or(0);
        if let Some(outcome) = self.pending.remove(&req_id) {
            let (errmsg, body) = (frame.errmsg, frame.body);
            let _ = outcome.send(Outcome::Answered(Answer {
                errcode,
                errmsg,
                body,
            }));
        } else if self.pings.contains(&req_id) {
            self.unanswered = 0;
            if errcode != 0 {
                let errmsg = frame.errmsg;
                tracing::warn!(errcode, %errmsg, "WeCom answered a ping with an error.");
            }
        } else {
            let cmd = frame.cmd;
            tracing::debug!(%cmd, %req_id, errcode, "WeCom frame matching nothing sent; ignored.");
        }
        Read::Skip
    }

    /// Every queued or written frame gets its outcome.
    fn closed(&mut self) {
        self.client.shared.link.send_replace(None);
        if let Some(mut frames) = self.outbox.take() {
            frames.close();
            while let Ok(out) = frames.try_recv() {
                let _ = out.outcome.send(Outcome::NotWritten(out.text));
            }
        }
        for (_, outcome) in self.pending.drain() {
            let _ = outcome.send(Outcome::Lost);
        }
    }

    fn reconnect(&mut self, ended: &Ended<Error>) -> Result<Duration, Error> {
        let (bot_id, timings) = (&self.client.bot_id, &self.client.timings);
        Ok(match ended.error() {
            Some(error @ Error::Refused { .. }) => {
                let wait = jitter(timings.refused_wait);
                tracing::error!(
                    %bot_id, %error, wait_s = wait.as_secs(),
                    "WeCom refused the subscription; retrying only after a long wait."
                );
                wait
            }
            Some(Error::Replaced) => {
                self.backoff.reset();
                let wait = jitter(timings.replaced_wait);
                tracing::warn!(
                    %bot_id, wait_s = wait.as_secs(),
                    "WeCom replaced this long connection with a newer one for the same bot \
                     (disconnected_event): another process holds the bot. Reconnecting only \
                     after a long wait; run the connection in one replica."
                );
                wait
            }
            _ => self.backoff.after(ended),
        })
    }
}

/// Writes `aibot_subscribe` and waits for its answer: `errcode` 0, or [`Error::Refused`]. The
/// secret is written here and nowhere else.
async fn subscribe(ws: &mut Ws, bot_id: &str, secret: &SecretString) -> Result<(), Error> {
    let req_id = frame::new_req_id(SUBSCRIBE);
    let body = json!({"bot_id": bot_id, "secret": secret.expose_secret()});
    let text = frame::encode(SUBSCRIBE, &req_id, Some(body));
    let unanswered = |e| Error::Unavailable(format!("{e}, before the subscription was answered"));
    ws::write(ws, Message::text(text))
        .await
        .map_err(unanswered)?;
    loop {
        match Inbound::parse(&ws::read_text(ws).await.map_err(unanswered)?) {
            Ok(answer) if answer.headers.req_id == req_id => {
                return match answer.errcode.unwrap_or(0) {
                    0 => Ok(()),
                    errcode => Err(Error::Refused {
                        errcode,
                        errmsg: answer.errmsg,
                    }),
                };
            }
            Ok(other) => tracing::debug!(
                cmd = %other.cmd, req_id = %other.headers.req_id,
                "WeCom frame before the subscription was answered; ignored."
            ),
            Err(error) => tracing::warn!(%error, "WeCom frame unreadable; ignored."),
        }
    }
}
