//! What the long connection is doing, for health checks and for the errors of sends that
//! found no connection.

use std::fmt;
use std::time::Duration;

use super::error::Error;

/// Where the long connection is. Watch it with
/// [`LongConnection::status`](super::LongConnection::status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// `run` has not started.
    Idle,
    /// Opening a connection and subscribing.
    Connecting,
    /// Subscribed: callbacks arrive and frames go out.
    Online,
    /// The last attempt failed or the connection ended; the next attempt comes after
    /// `retry_in`.
    Waiting {
        /// Why it is down.
        error: Error,
        /// The wait before the next attempt, from when this status was set.
        retry_in: Duration,
    },
    /// `run` returned.
    Stopped,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Idle => f.write_str("not started"),
            Self::Connecting => f.write_str("connecting"),
            Self::Online => f.write_str("subscribed"),
            Self::Waiting { error, retry_in } => {
                write!(f, "{error}; next attempt in {retry_in:?}")
            }
            Self::Stopped => f.write_str("stopped"),
        }
    }
}
