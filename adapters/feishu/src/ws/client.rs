//! The long connection of one app, as a [`Protocol`] of the kit's supervisor: discovery and
//! the upgrade, protobuf frames in and acks out, pings on the server's timing.
//!
//! Invariants: the first ping goes out as soon as a connection is open and then every
//! `PingInterval`, which a pong may change at any time; a connection silent for
//! [`SILENT_PINGS`] ping intervals is given up; a closed connection is replaced; an ack is
//! produced only for `Ok` and [`HandlerError::Failed`], never for [`HandlerError::Retry`] or a
//! handler that overran [`HANDLER_TIMEOUT`], so those payloads are pushed again; reconnection
//! follows the server's [`ClientConfig`] and gives up on a refusal or after `ReconnectCount`.

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workmate_adapter::ws::{self, Connector, Ended, Message, Protocol, Read, Settings, Status};

use super::backoff::Backoff;
use super::chunks::Reassembly;
use super::endpoint::{self, ClientConfig, ConfigUpdate};
use super::error::{Error, upgrade_error};
use super::frame::{AckCode, Frame, FrameKind, MESSAGE_ID, SEQ, SUM, TRACE_ID};
use super::{FrameHandler, HandlerError};

/// The most payloads handled at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// A handler still running after this is given up on and its payload left unacked (Feishu
/// itself waits 3 s before pushing it again).
pub const HANDLER_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection that has not sent a frame for this many ping intervals is presumed dead.
pub const SILENT_PINGS: u32 = 3;

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
    http: reqwest::Client,
    connector: Connector,
    base_url: String,
    app_id: String,
    app_secret: SecretString,
    timings: Timings,
}

impl LongConnection {
    /// A client of app `app_id` against the open platform at `base_url`
    /// (`https://open.feishu.cn` or `https://open.larksuite.com`).
    pub fn new(base_url: &str, app_id: &str, app_secret: SecretString) -> Result<Self, Error> {
        Ok(Self {
            http: workmate_adapter::net::http_client().map_err(Error::Setup)?,
            connector: Connector::new().map_err(Error::Setup)?,
            base_url: base_url.to_owned(),
            app_id: app_id.to_owned(),
            app_secret,
            timings: Timings::default(),
        })
    }

    /// The app it connects as.
    pub fn app_id(&self) -> &str {
        &self.app_id
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
        let settings = Settings {
            connect_timeout: self.timings.connect_timeout,
            drain: self.timings.drain,
            max_in_flight: MAX_IN_FLIGHT,
            max_waiting: None,
        };
        let mut session = Session {
            client: self,
            handler,
            config: ClientConfig::default(),
            backoff: Backoff::new(self.timings.config_second),
            reassembly: Reassembly::default(),
            service_id: 0,
            device_id: String::new(),
        };
        let status = watch::Sender::new(Status::Idle);
        ws::supervise(&mut session, &settings, &status, &stop).await
    }
}

/// One run of a [`LongConnection`].
struct Session<'a> {
    client: &'a LongConnection,
    handler: Arc<dyn FrameHandler>,
    config: ClientConfig,
    backoff: Backoff,
    /// Chunked payloads, across connections.
    reassembly: Reassembly,
    /// What every ping on the current connection carries.
    service_id: i32,
    /// Feishu's id of the current connection, for logs.
    device_id: String,
}

impl Protocol for Session<'_> {
    type Error = Error;
    const NAME: &'static str = "Feishu long connection";
    const MOVE_ON_CLOSE: bool = true;
    const PING_AT_OPEN: bool = true;

    /// Discovers the endpoint and opens a WebSocket to it.
    async fn dial(&mut self) -> Result<ws::Ws, Error> {
        let c = self.client;
        let endpoint = endpoint::discover(&c.http, &c.base_url, &c.app_id, &c.app_secret).await?;
        let ws = c.connector.open(endpoint.url.as_str()).await;
        let ws = ws.map_err(upgrade_error)?;
        self.config.apply(endpoint.config);
        (self.service_id, self.device_id) = (endpoint.service_id, endpoint.device_id);
        tracing::info!(device_id = %self.device_id, "Feishu long connection open.");
        Ok(ws)
    }

    fn unavailable(reason: String) -> Error {
        Error::Unavailable(reason)
    }

    fn ping_every(&self) -> Option<Duration> {
        Some(self.config.ping_every(self.client.timings.config_second))
    }

    fn silence(&self) -> Option<Duration> {
        self.ping_every()
            .map(|every| every.saturating_mul(SILENT_PINGS))
    }

    fn ping(&mut self) -> Result<Option<Message>, String> {
        Ok(Some(Message::binary(Frame::ping(self.service_id).encode())))
    }

    fn read(&mut self, message: Message) -> Read<Error> {
        let device_id = &self.device_id;
        let Message::Binary(bytes) = message else {
            tracing::debug!(%device_id, "Feishu text message ignored.");
            return Read::Skip;
        };
        let frame = match Frame::decode(&bytes) {
            Ok(frame) => frame,
            Err(error) => {
                tracing::warn!(%device_id, %error, "Feishu frame undecodable; ignored.");
                return Read::Skip;
            }
        };
        match frame.kind() {
            Some(FrameKind::Control) => self.control(&frame),
            Some(FrameKind::Data) => return self.data(frame),
            None => {
                let method = frame.method;
                tracing::debug!(%device_id, method, "Feishu frame of an unknown method ignored.");
            }
        }
        Read::Skip
    }

    fn reconnect(&mut self, ended: &Ended<Error>) -> Result<Duration, Error> {
        match ended {
            Ended::Failed(error) if !error.is_retryable() => Err(error.clone()),
            // Opened but never answered: as good as a failed attempt.
            _ if ended.was_healthy() => Ok(self.backoff.dropped(&self.config)),
            _ => (self.backoff.failed(&self.config)).ok_or(Error::GaveUp(self.backoff.failures())),
        }
    }
}

impl Session<'_> {
    /// A control frame: a pong may carry new timing.
    fn control(&mut self, frame: &Frame) {
        if frame.message_type() != "pong" {
            return;
        }
        let Some(payload) = frame.payload.as_deref().filter(|p| !p.is_empty()) else {
            return;
        };
        let device_id = &self.device_id;
        match serde_json::from_slice::<ConfigUpdate>(payload) {
            Ok(update) => {
                self.config.apply(update);
                let config = &self.config;
                tracing::debug!(%device_id, ?config, "Feishu connection timing updated.");
            }
            Err(error) => {
                tracing::warn!(%device_id, %error, "Feishu pong with an unreadable client config.");
            }
        }
    }

    /// A data frame: reassembled when chunked, then the whole payload to the handler.
    fn data(&mut self, mut frame: Frame) -> Read<Error> {
        let kind = frame.message_type().to_owned();
        if kind != "event" && kind != "card" {
            tracing::debug!(%kind, "Feishu data frame of an unknown type ignored.");
            return Read::Skip;
        }
        let message_id = frame.header(MESSAGE_ID).unwrap_or_default().to_owned();
        let index = |key| usize::try_from(frame.header_number(key)?).ok();
        let (sum, seq) = (index(SUM).unwrap_or(1), index(SEQ).unwrap_or(0));
        let chunk = frame.payload.take().unwrap_or_default();
        let payload = match self
            .reassembly
            .add(Instant::now(), &message_id, sum, seq, chunk)
        {
            Ok(Some(payload)) => payload,
            Ok(None) => return Read::Skip,
            Err(refused) => {
                tracing::warn!(%message_id, sum, seq, ?refused, "Feishu chunk with a bad index dropped.");
                return Read::Skip;
            }
        };
        let handler = Arc::clone(&self.handler);
        Read::Deliver(Box::pin(async move {
            let trace_id = frame.header(TRACE_ID).unwrap_or_default().to_owned();
            let started = Instant::now();
            let outcome =
                tokio::time::timeout(HANDLER_TIMEOUT, handler.handle(&kind, payload)).await;
            let elapsed_ms = ws::millis(started.elapsed());
            let ack = match outcome {
                Ok(Ok(response)) => frame.into_ack(AckCode::Ok, Some(&response), elapsed_ms),
                Ok(Err(HandlerError::Failed(error))) => {
                    tracing::warn!(%kind, %message_id, %trace_id, %error, "Feishu payload failed; acked with code 500.");
                    frame.into_ack(AckCode::Failed, None, elapsed_ms)
                }
                Ok(Err(HandlerError::Retry)) => {
                    tracing::warn!(%kind, %message_id, %trace_id, "Feishu payload not taken; left unacked so Feishu pushes it again.");
                    return None;
                }
                Err(_) => {
                    tracing::warn!(%kind, %message_id, %trace_id, elapsed_ms, "Feishu handler overran; payload left unacked.");
                    return None;
                }
            };
            Some(Message::binary(ack.encode()))
        }))
    }
}
