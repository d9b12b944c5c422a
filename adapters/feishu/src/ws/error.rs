//! Why the long connection could not be opened, and whether trying again can help.
//!
//! Invariant: a refused upgrade is reported with Feishu's `Handshake-Status`, `Handshake-Msg`
//! and `Handshake-Autherrcode` headers, and is retried unless they say the app is forbidden
//! or over its connection limit (as the SDKs decide); no message here contains the App Secret.

use workmate_adapter::ws::tungstenite;

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

/// A failed WebSocket upgrade as an [`Error`].
pub(crate) fn upgrade_error(error: tungstenite::Error) -> Error {
    let tungstenite::Error::Http(response) = error else {
        return Error::Unavailable(format!("WebSocket connection failed: {error}"));
    };
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let http_status = response.status().as_u16();
    let status = header("Handshake-Status");
    let msg = header("Handshake-Msg");
    let auth_code = header("Handshake-Autherrcode");
    let detail = format!(
        "WebSocket upgrade refused with HTTP {http_status} (Handshake-Status {status:?}, \
         Handshake-Msg {msg:?}, Handshake-Autherrcode {auth_code:?})"
    );
    let code = status
        .trim()
        .parse::<i64>()
        .unwrap_or(i64::from(http_status));
    let auth_code = auth_code.trim().parse::<i64>().ok();
    match (code, auth_code) {
        (CODE_AUTH_FAILED, Some(CODE_CONNECTION_LIMIT)) => {
            Error::refused(CODE_CONNECTION_LIMIT, &detail)
        }
        (CODE_FORBIDDEN, _) => Error::refused(CODE_FORBIDDEN, &detail),
        // Other auth failures are the ticket of the URL (a fresh discovery brings a new one)
        // or Feishu's side; the credentials themselves were accepted by discovery.
        _ => Error::Unavailable(detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u16, headers: &[(&str, &str)]) -> Error {
        let mut response = tungstenite::http::Response::builder().status(status);
        for (name, value) in headers {
            response = response.header(*name, *value);
        }
        upgrade_error(tungstenite::Error::Http(Box::new(
            response.body(None).unwrap(),
        )))
    }

    #[test]
    fn upgrade_refusals_are_classified_like_the_sdk_does() {
        let limit = refused(
            200,
            &[
                ("Handshake-Status", "514"),
                ("Handshake-Msg", "too many"),
                ("Handshake-Autherrcode", "1000040350"),
            ],
        );
        assert!(
            matches!(
                limit,
                Error::Refused {
                    code: CODE_CONNECTION_LIMIT,
                    ..
                }
            ),
            "{limit}"
        );
        assert!(limit.to_string().contains("too many"), "{limit}");
        assert!(limit.to_string().contains("50 connections"), "{limit}");

        let forbidden = refused(
            403,
            &[("Handshake-Status", "403"), ("Handshake-Msg", "banned")],
        );
        assert!(
            matches!(
                forbidden,
                Error::Refused {
                    code: CODE_FORBIDDEN,
                    ..
                }
            ),
            "{forbidden}"
        );

        let ticket = refused(
            200,
            &[("Handshake-Status", "514"), ("Handshake-Autherrcode", "1")],
        );
        assert!(ticket.is_retryable(), "{ticket}");
        assert!(
            ticket.to_string().contains("Handshake-Autherrcode \"1\""),
            "{ticket}"
        );

        assert!(refused(502, &[]).is_retryable());
    }
}
