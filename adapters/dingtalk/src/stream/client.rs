//! The Stream connection of one app, as a [`Protocol`] of the kit's supervisor: a fresh `open`
//! per connection, SYSTEM frames answered, EVENT and CALLBACK frames to the handler and their
//! acks back.
//!
//! Invariants: a callback is acked only with its handler's answer, and an event `SUCCESS` only
//! when its handler succeeded (`LATER` otherwise, also when it overran [`HANDLER_TIMEOUT`]), so
//! nothing is acked that was not taken; a connection silent for [`SILENT_PINGS`] ping intervals
//! is given up; a refused `open` is logged with what to fix and retried at the backoff's pace.

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use workmate_adapter::backoff::Backoff;
use workmate_adapter::ws::{self, Connector, Ended, Message, Protocol, Read, Settings, Status};

use super::frame::{self, Class, Downstream};
use super::open::{self, Endpoint};
use super::{Error, FrameKind, StreamHandler};

/// The most messages handled at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// A handler still running after this is given up on (DingTalk pushes an un-acked message
/// again after about a minute).
pub const HANDLER_TIMEOUT: Duration = Duration::from_secs(30);
/// A connection silent for this many ping intervals is presumed dead.
pub const SILENT_PINGS: u32 = 3;

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
    http: reqwest::Client,
    connector: Connector,
    api_base: String,
    client_id: String,
    client_secret: SecretString,
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
        Ok(Self {
            http: workmate_adapter::net::http_client().map_err(Error::Setup)?,
            connector: Connector::new().map_err(Error::Setup)?,
            api_base: api_base.to_owned(),
            client_id: client_id.to_owned(),
            client_secret,
            timings: Timings::default(),
        })
    }

    /// The app it connects as.
    pub fn client_id(&self) -> &str {
        &self.client_id
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
        let timings = &self.timings;
        let settings = Settings {
            connect_timeout: timings.connect_timeout,
            drain: timings.drain,
            max_in_flight: MAX_IN_FLIGHT,
            max_waiting: None,
        };
        let mut session = Session {
            client: self,
            handler,
            backoff: Backoff::new(timings.backoff_first, timings.backoff_max),
        };
        let status = watch::Sender::new(Status::Idle);
        ws::supervise(&mut session, &settings, &status, &stop).await
    }
}

/// One run of a [`StreamClient`].
struct Session<'a> {
    client: &'a StreamClient,
    handler: Arc<dyn StreamHandler>,
    backoff: Backoff,
}

impl Protocol for Session<'_> {
    type Error = Error;
    const NAME: &'static str = "DingTalk Stream connection";

    /// Calls `open` and connects to the endpoint it names.
    async fn dial(&mut self) -> Result<ws::Ws, Error> {
        let c = self.client;
        let Endpoint(url) =
            open::open(&c.http, &c.api_base, &c.client_id, &c.client_secret).await?;
        let ws = c.connector.open(url.as_str()).await;
        // The error text names the host, never the URL with its ticket.
        ws.map_err(|e| Error::Unavailable(format!("WebSocket connection failed: {e}")))
    }

    fn unavailable(reason: String) -> Error {
        Error::Unavailable(reason)
    }

    fn ping_every(&self) -> Option<Duration> {
        Some(self.client.timings.ping_every)
    }

    fn silence(&self) -> Option<Duration> {
        Some(self.client.timings.ping_every.saturating_mul(SILENT_PINGS))
    }

    fn read(&mut self, message: Message) -> Read<Error> {
        let Message::Text(text) = message else {
            return Read::Skip;
        };
        let message = match Downstream::parse(text.as_str()) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, "DingTalk frame unreadable; ignored.");
                return Read::Skip;
            }
        };
        match message.class() {
            Class::Ping => Read::Reply(Message::text(frame::pong(&message))),
            Class::Disconnect => Read::Move,
            Class::OtherSystem => {
                tracing::debug!(topic = %message.headers.topic, "DingTalk system message ignored.");
                Read::Skip
            }
            Class::Unknown => {
                tracing::debug!(kind = %message.kind, "DingTalk message of an unknown type ignored.");
                Read::Skip
            }
            Class::Handled(kind) => Read::Deliver(handle(Arc::clone(&self.handler), kind, message)),
        }
    }

    fn reconnect(&mut self, ended: &Ended<Error>) -> Result<Duration, Error> {
        if let Ended::Failed(error @ Error::Refused { .. }) = ended {
            tracing::error!(%error, "DingTalk refused the Stream connection.");
        }
        Ok(self.backoff.after(ended))
    }
}

/// Runs the handler on one message; the ack, if it is to have one.
fn handle(handler: Arc<dyn StreamHandler>, kind: FrameKind, message: Downstream) -> ws::Task {
    Box::pin(async move {
        let Downstream { headers, data, .. } = message;
        let id = headers.message_id.as_str();
        let topic = headers.topic.as_str();
        let outcome =
            tokio::time::timeout(HANDLER_TIMEOUT, handler.handle(kind, topic, id, &data)).await;
        let ack = match (kind, outcome) {
            (FrameKind::Callback, Ok(Ok(response))) => frame::callback_ack(id, &response),
            (FrameKind::Event, Ok(Ok(_))) => frame::event_ack(id, true, "OK"),
            (FrameKind::Event, Ok(Err(error))) => {
                tracing::warn!(message_id = %id, %topic, %error, "DingTalk event not handled; acked LATER.");
                frame::event_ack(id, false, &error.0)
            }
            (FrameKind::Event, Err(_)) => {
                tracing::warn!(message_id = %id, %topic, "DingTalk event handler overran; acked LATER.");
                frame::event_ack(id, false, "handler timed out")
            }
            (FrameKind::Callback, outcome) => {
                tracing::warn!(message_id = %id, %topic, timed_out = outcome.is_err(), "DingTalk callback not handled; left unacked so DingTalk pushes it again.");
                return None;
            }
        };
        Some(Message::text(ack))
    })
}
