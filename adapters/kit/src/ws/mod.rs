//! The one long-connection supervisor every platform's WebSocket client runs on: Feishu's long
//! connection, WeCom's smart-robot socket, DingTalk Stream and Slack Socket Mode.
//!
//! A platform supplies a [`Protocol`]: how to dial (endpoint discovery, the upgrade, a
//! subscription), how to read a frame ([`Read`]), its pings and its reconnection policy.
//! [`supervise`] does the rest: dials with a timeout, serves one connection at a time, pings and
//! watches for silence, runs deliveries on a bounded pool of handler tasks and writes their
//! acks, reconnects after the policy's wait, and drains on stop.
//!
//! Invariants: an ack is written only when its handler produced one, so what a handler did not
//! take is delivered again; at most [`Settings::max_in_flight`] handlers run at once and the
//! queue behind them is bounded; a connection the platform asked to leave ([`Read::Move`]) is
//! closed only after its successor was dialed; on stop, running handlers get [`Settings::drain`]
//! with the connection still open to write their acks and replies, then are cut; every task is
//! owned and joined; the [`Status`] says what the connection is doing, and is
//! [`Status::Stopped`] once [`supervise`] returned or was dropped.

mod pool;
mod socket;
mod supervisor;

use std::fmt;
use std::future::Future;
use std::time::Duration;

pub use socket::{CLOSE_TIMEOUT, Connector, WRITE_TIMEOUT, Ws, close, read_text, write};
pub use supervisor::supervise;
pub use tokio_tungstenite::tungstenite::{self, Message};

use crate::BoxFuture;

/// A delivery's handler, run on its own task: the ack to write back, if any.
pub type Task = BoxFuture<'static, Option<Message>>;

/// What a platform made of one text or binary frame.
pub enum Read<E> {
    /// Nothing more to do (a pong, an answer the platform matched, a chunk of a payload).
    Skip,
    /// Write this back at once (DingTalk's answer to its SYSTEM ping, Slack's ack of an
    /// undecodable envelope).
    Reply(Message),
    /// Run this handler on the pool; its ack, if any, is written when it finishes.
    Deliver(Task),
    /// The platform asks for a new connection; this one stays open until the next is dialed.
    Move,
    /// The platform ended the connection for a reason of its own (WeCom's
    /// `disconnected_event`).
    End(E),
}

impl<E: fmt::Debug> fmt::Debug for Read<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Skip => f.write_str("Skip"),
            Self::Reply(message) => f.debug_tuple("Reply").field(message).finish(),
            Self::Deliver(_) => f.write_str("Deliver"),
            Self::Move => f.write_str("Move"),
            Self::End(error) => f.debug_tuple("End").field(error).finish(),
        }
    }
}

/// Why a connection is down, for the platform's [`Protocol::reconnect`].
#[derive(Debug)]
pub enum Ended<E> {
    /// Dialing failed (or timed out).
    Failed(E),
    /// An open connection broke, closed, went silent or was ended by the platform.
    /// `healthy`: the platform sent a frame on it, so the backoff may start over.
    Lost {
        /// Why.
        error: E,
        /// The platform sent a frame on it.
        healthy: bool,
    },
    /// The platform asked for a new connection.
    Moved {
        /// The platform sent a frame on it.
        healthy: bool,
    },
}

impl<E> Ended<E> {
    /// The error, unless the platform asked to move.
    pub fn error(&self) -> Option<&E> {
        match self {
            Self::Failed(error) | Self::Lost { error, .. } => Some(error),
            Self::Moved { .. } => None,
        }
    }

    /// An open connection that worked ended.
    pub fn was_healthy(&self) -> bool {
        matches!(
            self,
            Self::Lost { healthy: true, .. } | Self::Moved { healthy: true }
        )
    }
}

/// One platform's long connection, as the supervisor drives it. Each run gets its own value:
/// it holds the per-run state (the handler, a server-sent config, a backoff) and the state of
/// the current connection, which [`dial`](Self::dial) sets up.
pub trait Protocol: Send {
    /// Why a connection could not be opened or was lost.
    type Error: fmt::Display + Clone + Send + Sync + 'static;

    /// For logs: "Feishu long connection".
    const NAME: &'static str;
    /// A close frame from the platform asks for a new connection (kept open until the next is
    /// dialed) rather than losing this one.
    const MOVE_ON_CLOSE: bool = false;
    /// The first ping goes out as soon as a connection is open, not one interval later.
    const PING_AT_OPEN: bool = false;

    /// Opens a connection: discovery, the WebSocket upgrade, a subscription.
    fn dial(&mut self) -> impl Future<Output = Result<Ws, Self::Error>> + Send;

    /// The error of a connection lost for `reason` (a broken socket, a timeout).
    fn unavailable(reason: String) -> Self::Error;

    /// Takes one text or binary frame.
    fn read(&mut self, message: Message) -> Read<Self::Error>;

    /// The wait between pings; `None`: no pings (the platform pings).
    fn ping_every(&self) -> Option<Duration> {
        None
    }

    /// How long the connection may stay silent before it is given up; `None`: no limit.
    fn silence(&self) -> Option<Duration> {
        None
    }

    /// The ping to write, or `Err` when the link is known dead (pings left unanswered).
    fn ping(&mut self) -> Result<Option<Message>, String> {
        Ok(Some(Message::Ping(Default::default())))
    }

    /// The next frame the platform's own senders queued for this connection (WeCom's replies);
    /// must be cancel-safe. By default there are none.
    fn outbound(&mut self) -> impl Future<Output = Option<Message>> + Send {
        std::future::pending()
    }

    /// The current connection ended, however: whatever waits on it learns so.
    fn closed(&mut self) {}

    /// The wait before the next attempt after `ended`, or the error that ends the run.
    fn reconnect(&mut self, ended: &Ended<Self::Error>) -> Result<Duration, Self::Error>;
}

/// The supervisor's own limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// How long dialing (discovery, upgrade, subscription) may take.
    pub connect_timeout: Duration,
    /// On stop, how long running handlers may take to finish before they are cut.
    pub drain: Duration,
    /// The most handlers running at once.
    pub max_in_flight: usize,
    /// `None`: the reader takes a handler slot before it reads, which holds the platform back.
    /// `Some(n)`: the reader never waits (acks and answers share the socket); up to `n`
    /// deliveries wait for a slot and one beyond that is dropped with an error log.
    pub max_waiting: Option<usize>,
}

/// Where a long connection is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status<E> {
    /// Not started.
    Idle,
    /// Dialing.
    Connecting,
    /// Open: deliveries arrive and frames go out.
    Online,
    /// The last attempt failed or the connection ended; the next comes after `retry_in`.
    Waiting {
        /// Why it is down.
        error: E,
        /// The wait before the next attempt, from when this status was set.
        retry_in: Duration,
    },
    /// The supervisor returned.
    Stopped,
}

impl<E: fmt::Display> fmt::Display for Status<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Idle => f.write_str("not started"),
            Self::Connecting => f.write_str("connecting"),
            Self::Online => f.write_str("online"),
            Self::Waiting { error, retry_in } => {
                write!(f, "{error}; next attempt in {retry_in:?}")
            }
            Self::Stopped => f.write_str("stopped"),
        }
    }
}

/// `wait` in whole milliseconds, for logs.
pub fn millis(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)
}
