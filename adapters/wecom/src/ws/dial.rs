//! Opening one connection: the WebSocket upgrade, then the subscription.
//!
//! Invariants: a connection is handed on only once WeCom answered its `aibot_subscribe` with
//! `errcode` 0; a non-zero `errcode` is [`Error::Refused`]; the secret is written in the
//! subscribe frame and nowhere else.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use secrecy::{ExposeSecret as _, SecretString};
use serde_json::json;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use super::error::Error;
use super::frame::{self, Inbound, SUBSCRIBE};

/// A WebSocket of the long connection.
pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What opening a connection needs.
#[derive(Debug)]
pub(crate) struct Dialer {
    pub(crate) url: String,
    pub(crate) bot_id: String,
    pub(crate) secret: SecretString,
    pub(crate) tls: Arc<rustls::ClientConfig>,
}

impl Dialer {
    /// Opens a WebSocket and subscribes the bot on it.
    pub(crate) async fn dial(&self) -> Result<Ws, Error> {
        let connector = Connector::Rustls(Arc::clone(&self.tls));
        let (mut ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            self.url.as_str(),
            None,
            false,
            Some(connector),
        )
        .await
        .map_err(|e| Error::Unavailable(format!("connecting to {} failed: {e}", self.url)))?;
        match self.subscribe(&mut ws).await {
            Ok(()) => Ok(ws),
            Err(error) => {
                close(ws).await;
                Err(error)
            }
        }
    }

    /// Writes `aibot_subscribe` and waits for its answer.
    async fn subscribe(&self, ws: &mut Ws) -> Result<(), Error> {
        let req_id = frame::new_req_id(SUBSCRIBE);
        let body = json!({"bot_id": self.bot_id, "secret": self.secret.expose_secret()});
        ws.send(Message::text(frame::encode(SUBSCRIBE, &req_id, Some(body))))
            .await
            .map_err(|e| Error::Unavailable(format!("writing the subscription failed: {e}")))?;
        loop {
            let text = match ws.next().await {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(close))) => {
                    return Err(Error::Unavailable(format!(
                        "WeCom closed the connection before answering the subscription \
                         ({close:?})"
                    )));
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    return Err(Error::Unavailable(format!(
                        "the connection failed before the subscription was answered: {e}"
                    )));
                }
                None => {
                    return Err(Error::Unavailable(
                        "the connection ended before the subscription was answered".to_owned(),
                    ));
                }
            };
            match Inbound::parse(&text) {
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
                Err(error) => {
                    tracing::warn!(%error, "WeCom frame unreadable; ignored.");
                }
            }
        }
    }
}

/// How long closing a socket politely may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Closes a socket, politely and briefly.
pub(crate) async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(None)).await;
}
