//! Why the long connection is down, and why a frame the client sent did not go through.
//!
//! Invariant: no message here contains the bot's secret.

use std::time::Duration;

/// Why the long connection is not up, or cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The client cannot be built (the URL or TLS).
    #[error("cannot set up the WeCom long connection: {0}")]
    Setup(String),
    /// `run` was called while this client already runs.
    #[error(
        "this WeCom long connection is already running; WeCom keeps one connection per bot id \
         and a second one would kick the first, so run it once"
    )]
    AlreadyRunning,
    /// WeCom refused the subscription: a configuration error, retried only after a long wait.
    #[error(
        "WeCom refused to subscribe the bot (errcode {errcode}: {errmsg}); check the smart \
         robot's Bot ID and Secret, and that the robot is set to receive messages through the \
         long connection (API mode)"
    )]
    Refused {
        /// WeCom's code.
        errcode: i64,
        /// WeCom's message.
        errmsg: String,
    },
    /// WeCom sent `disconnected_event`: a newer connection for the same bot id replaced this
    /// one. Another process holds the bot, so reconnecting comes only after a long wait.
    #[error(
        "WeCom closed this connection because a newer connection subscribed the same bot \
         (disconnected_event); another process holds this bot's long connection: run it in \
         one replica only (it takes the lease)"
    )]
    Replaced,
    /// The network or WeCom failed for now; the connection is tried again.
    #[error("the WeCom long connection is unavailable: {0}")]
    Unavailable(String),
}

/// Why [`Sender::respond`](super::Sender::respond) or [`Sender::send`](super::Sender::send)
/// failed. All but [`SendError::Refused`] and [`SendError::Stopped`] may succeed when tried
/// again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// No subscribed connection came up while the frame waited; it was not written.
    #[error(
        "{cmd} was not sent: no WeCom long connection for {waited:?} ({status}); \
         try again once it is back"
    )]
    NotConnected {
        /// The command.
        cmd: String,
        /// How long it waited for a connection.
        waited: Duration,
        /// What the connection was doing meanwhile.
        status: String,
    },
    /// The long connection is stopped; the frame was not written.
    #[error("{cmd} was not sent: the WeCom long connection is stopped")]
    Stopped {
        /// The command.
        cmd: String,
    },
    /// The frame was written but no answer came in time: it may or may not have arrived.
    #[error(
        "{cmd} ({req_id}) was written but WeCom did not answer within {waited:?}; it may or \
         may not have arrived"
    )]
    AckTimeout {
        /// The command.
        cmd: String,
        /// Its request id.
        req_id: String,
        /// How long it waited for the answer.
        waited: Duration,
    },
    /// The connection was lost after the frame was written and before its answer: it may or
    /// may not have arrived.
    #[error(
        "the WeCom connection was lost before {cmd} ({req_id}) was answered; it may or may not \
         have arrived"
    )]
    Lost {
        /// The command.
        cmd: String,
        /// Its request id.
        req_id: String,
    },
    /// WeCom answered with a non-zero `errcode`.
    #[error("WeCom refused {cmd} ({req_id}): errcode {errcode}: {errmsg}")]
    Refused {
        /// The command.
        cmd: String,
        /// Its request id.
        req_id: String,
        /// WeCom's code.
        errcode: i64,
        /// WeCom's message.
        errmsg: String,
    },
}

impl SendError {
    /// WeCom's `errcode`, when it refused the frame.
    pub fn errcode(&self) -> Option<i64> {
        match self {
            Self::Refused { errcode, .. } => Some(*errcode),
            _ => None,
        }
    }

    /// Whether sending again can succeed: not after a refusal (the reference names no
    /// rate-limit `errcode` for the long connection, so none is singled out) or a stop.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, Self::Refused { .. } | Self::Stopped { .. })
    }
}
