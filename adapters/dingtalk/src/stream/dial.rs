//! Opening one connection: the `open` call, then the WebSocket upgrade with its ticket.
//!
//! Invariant: every connection gets a fresh `open` (tickets are single-use).

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio::net::TcpStream;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use super::error::Error;
use super::open::{self, Endpoint};

/// A WebSocket of the Stream connection.
pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What opening a connection needs.
#[derive(Debug)]
pub(crate) struct Dialer {
    pub(crate) http: reqwest::Client,
    pub(crate) tls: Arc<rustls::ClientConfig>,
    pub(crate) api_base: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: SecretString,
}

impl Dialer {
    /// Calls `open` and connects to the endpoint it names.
    pub(crate) async fn dial(&self) -> Result<Ws, Error> {
        let Endpoint(url) = open::open(
            &self.http,
            &self.api_base,
            &self.client_id,
            &self.client_secret,
        )
        .await?;
        let connector = Connector::Rustls(Arc::clone(&self.tls));
        let (ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            url.as_str(),
            None,
            true,
            Some(connector),
        )
        .await
        // The error text names the host, never the URL with its ticket.
        .map_err(|e| Error::Unavailable(format!("WebSocket connection failed: {e}")))?;
        Ok(ws)
    }
}

/// How long closing a socket politely may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Closes a socket, politely and briefly.
pub(crate) async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(None)).await;
}
