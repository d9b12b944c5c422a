//! Why the long connection could not be opened, and whether trying again can help.

/// Endpoint code: system busy (retried).
pub(crate) const CODE_SYSTEM_BUSY: i64 = 1;
/// Endpoint code: internal error (retried).
pub(crate) const CODE_INTERNAL: i64 = 1_000_040_343;
/// Endpoint or handshake code: the app is forbidden.
pub(crate) const CODE_FORBIDDEN: i64 = 403;
/// Endpoint or handshake code: authentication failed.
pub(crate) const CODE_AUTH_FAILED: i64 = 514;
/// Endpoint code or handshake auth code: the app has too many connections.
pub(crate) const CODE_CONNECTION_LIMIT: i64 = 1_000_040_350;

/// A failure of the long connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The client cannot be built (TLS or HTTP set-up).
    #[error("cannot set up the Feishu long connection: {0}")]
    Setup(String),
    /// Feishu refused this app; asking again with the same credentials cannot succeed.
    #[error("Feishu refused the long connection (code {code}: {msg}); {hint}")]
    Refused {
        /// Feishu's code (endpoint `code`, or the handshake's status or auth code).
        code: i64,
        /// Feishu's message.
        msg: String,
        /// What the operator should do.
        hint: &'static str,
    },
    /// Feishu or the network failed for now; the connection is tried again.
    #[error("the Feishu long connection is unavailable: {0}")]
    Unavailable(String),
    /// Reconnection failed as many times in a row as the server's `ReconnectCount` allows.
    #[error(
        "gave up on the Feishu long connection after {0} failed attempts in a row \
         (the server's ReconnectCount); restart it once Feishu is reachable"
    )]
    GaveUp(u64),
}

impl Error {
    /// A refusal with Feishu's `code` and `msg`, and what to do about it.
    pub(crate) fn refused(code: i64, msg: &str) -> Self {
        let hint = match code {
            CODE_FORBIDDEN => {
                "the app may not use the long connection: check it is a custom app with \
                 \"receive events through a long connection\" enabled"
            }
            CODE_AUTH_FAILED => "check the App ID and App Secret",
            CODE_CONNECTION_LIMIT => {
                "the app already has Feishu's maximum of 50 connections: stop other clients \
                 of this app or run fewer replicas"
            }
            _ => "check the App ID, the App Secret and the base URL",
        };
        Self::Refused {
            code,
            msg: msg.to_owned(),
            hint,
        }
    }

    /// Whether trying again later can succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}
