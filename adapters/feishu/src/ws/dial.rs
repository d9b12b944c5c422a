//! Opening one connection: discovery, then the WebSocket upgrade.
//!
//! Invariant: a refused upgrade is reported with Feishu's `Handshake-Status`, `Handshake-Msg`
//! and `Handshake-Autherrcode` headers, and is retried unless they say the app is forbidden
//! or over its connection limit (as the SDKs decide).

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use super::endpoint::{self, ConfigUpdate};
use super::error::{CODE_AUTH_FAILED, CODE_CONNECTION_LIMIT, CODE_FORBIDDEN, Error};

/// A WebSocket of the long connection.
pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// An open connection.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) ws: Ws,
    /// What every ping on this connection carries.
    pub(crate) service_id: i32,
    /// Feishu's id of the connection, for logs.
    pub(crate) device_id: String,
    /// The timing discovery sent.
    pub(crate) config: ConfigUpdate,
}

/// What opening a connection needs.
#[derive(Debug)]
pub(crate) struct Dialer {
    pub(crate) http: reqwest::Client,
    pub(crate) tls: Arc<rustls::ClientConfig>,
    pub(crate) base_url: String,
    pub(crate) app_id: String,
    pub(crate) app_secret: SecretString,
}

impl Dialer {
    /// Discovers the endpoint and opens a WebSocket to it.
    pub(crate) async fn dial(&self) -> Result<Link, Error> {
        let endpoint =
            endpoint::discover(&self.http, &self.base_url, &self.app_id, &self.app_secret).await?;
        let connector = Connector::Rustls(Arc::clone(&self.tls));
        let (ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            endpoint.url.as_str(),
            None,
            true,
            Some(connector),
        )
        .await
        .map_err(upgrade_error)?;
        Ok(Link {
            ws,
            service_id: endpoint.service_id,
            device_id: endpoint.device_id,
            config: endpoint.config,
        })
    }
}

/// How long closing a socket politely may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Closes a socket, politely and briefly.
pub(crate) async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(None)).await;
}

/// A failed WebSocket upgrade as an [`Error`].
fn upgrade_error(error: tungstenite::Error) -> Error {
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
