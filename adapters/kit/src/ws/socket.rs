//! The WebSocket itself: dialing with the workspace's TLS set-up, writing with a deadline,
//! closing politely.
//!
//! Invariants: every `wss://` peer is verified against the operating system's trust store
//! ([`crate::net::tls_config`]); a write that the peer does not take within [`WRITE_TIMEOUT`]
//! counts as a lost connection; closing never waits more than [`CLOSE_TIMEOUT`].

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A WebSocket of a long connection.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A write that takes longer than this (the peer stopped reading) has lost the connection.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long closing a socket politely may take.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Opens WebSockets with the workspace's TLS configuration.
#[derive(Clone, Debug)]
pub struct Connector(Arc<rustls::ClientConfig>);

impl Connector {
    /// A connector verifying peers with the operating system's trust store.
    pub fn new() -> Result<Self, String> {
        Ok(Self(Arc::new(crate::net::tls_config()?)))
    }

    /// The WebSocket upgrade at `url` (`wss://`, or `ws://` for a local test server). The
    /// error keeps the refused response, whose headers some platforms explain themselves in.
    pub async fn open(&self, url: &str) -> Result<Ws, tungstenite::Error> {
        let connector = tokio_tungstenite::Connector::Rustls(Arc::clone(&self.0));
        let (ws, _) =
            tokio_tungstenite::connect_async_tls_with_config(url, None, true, Some(connector))
                .await?;
        Ok(ws)
    }
}

/// Writes one message, giving up after [`WRITE_TIMEOUT`].
pub async fn write(ws: &mut Ws, message: Message) -> Result<(), String> {
    match tokio::time::timeout(WRITE_TIMEOUT, ws.send(message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("a write failed: {error}")),
        Err(_) => Err(format!("a write took longer than {WRITE_TIMEOUT:?}")),
    }
}

/// The next text frame, skipping pings and binary frames; `Err` when the connection breaks or
/// closes first. For a dialer that waits for an answer (a subscription) before handing on.
pub async fn read_text(ws: &mut Ws) -> Result<String, String> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => return Ok(text.as_str().to_owned()),
            Some(Ok(Message::Close(frame))) => {
                return Err(format!("the peer closed the connection ({frame:?})"));
            }
            Some(Ok(_)) => {}
            Some(Err(error)) => return Err(format!("the connection failed: {error}")),
            None => return Err("the connection ended".to_owned()),
        }
    }
}

/// Closes a socket, politely and briefly.
pub async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(None)).await;
}
