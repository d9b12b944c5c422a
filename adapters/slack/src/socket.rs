//! Socket Mode: Slack delivers events, interactions and slash commands over a WebSocket that
//! workmate opens, instead of POSTing them to workmate's HTTP routes.
//!
//! Invariants: the connection is authenticated by the app-level token (`xapp-…`) that
//! `apps.connections.open` takes, so no request signature applies; an envelope is acked with
//! `{"envelope_id": …}` once its handler took it (with the optional response payload of a slash
//! command), or when the handler has not answered within [`RESPONSE_DEADLINE`], or at once when
//! its payload cannot be decoded; an envelope the handler could not take ([`Handled::Retry`]) is
//! left unacked, so Slack delivers it again instead of it being lost; a payload is decoded with the
//! same decoders the HTTP routes use; on
//! `disconnect` a new connection is opened before the old one is closed; a lost connection is
//! reopened after a backoff that doubles from [`Backoff::initial`] up to [`Backoff::max`] and
//! resets once a connection says `hello`; cancelling the token closes the socket and waits for
//! the handlers already started. WebSocket pings are answered by tungstenite itself.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

use crate::inbound::{
    DecodeError, EventEnvelope, Interaction, SlashCommand, decode_event_envelope,
    decode_slash_command,
};
use crate::web::{SlackWeb, WebError, tls_config};

/// How long a slash-command handler may take to produce the ack's payload (Slack allows 3 s).
pub const RESPONSE_DEADLINE: Duration = Duration::from_millis(2500);
/// How long a new connection may take to say `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the TCP, TLS and WebSocket handshakes may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long closing a replaced or cancelled socket may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What arrived over the socket, decoded as the HTTP routes decode the same payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SocketInbound {
    /// `events_api`: the same body as an Events API request.
    Event(Box<EventEnvelope>),
    /// `interactive`: the same payload as the interactivity route's `payload` field.
    Interaction(Interaction),
    /// `slash_commands`: the slash command's fields.
    SlashCommand(Box<SlashCommand>),
}

/// What a handler made of an envelope.
#[derive(Clone, Debug, PartialEq)]
pub enum Handled {
    /// Taken: ack it, with this payload for a slash command that accepts one.
    Ack(Option<Value>),
    /// Not taken (no room to process it now): leave it unacked, so Slack redelivers it.
    Retry,
}

/// Where decoded envelopes go.
pub trait SocketHandler: Send + Sync + 'static {
    /// Called once per decoded envelope, on its own task; the envelope is acked when it returns
    /// [`Handled::Ack`] (or when [`RESPONSE_DEADLINE`] passes first). For a slash command that
    /// accepts a response payload, the ack's JSON (a message: `{"response_type", "text", …}`) is
    /// sent as the ack's `payload`.
    fn handle(&self, inbound: SocketInbound) -> impl Future<Output = Handled> + Send;
}

/// The waits between reconnection attempts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait; each failure doubles the previous one up to this.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(30),
        }
    }
}

/// A Socket Mode client for one app-level token.
#[derive(Clone, Debug)]
pub struct SocketMode {
    web: SlackWeb,
    tls: Arc<rustls::ClientConfig>,
    backoff: Backoff,
}

/// One envelope as Slack sends it.
#[derive(Debug, Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    envelope_id: Option<String>,
    #[serde(default)]
    payload: Option<Value>,
    #[serde(default)]
    accepts_response_payload: bool,
    #[serde(default)]
    reason: Option<String>,
}

/// Why a connection ended.
#[derive(Debug)]
enum Ended {
    Cancelled,
    /// Slack asked for a new connection; the old one is still open.
    Refresh(Box<Ws>),
    Lost {
        greeted: bool,
    },
}

impl SocketMode {
    /// A client calling `apps.connections.open` at `api_base` with `app_token`.
    pub fn new(api_base: &str, app_token: SecretString) -> Result<Self, WebError> {
        Ok(Self {
            web: SlackWeb::new(api_base, app_token)?,
            tls: Arc::new(tls_config()?),
            backoff: Backoff::default(),
        })
    }

    /// The same client with other reconnection waits.
    #[must_use]
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Connects and delivers envelopes to `handler` until `cancel` fires, reconnecting as
    /// needed; returns once the socket is closed and every started handler has finished.
    pub async fn run<H: SocketHandler>(self, handler: Arc<H>, cancel: CancellationToken) {
        let mut tasks = JoinSet::new();
        let mut delay = self.backoff.initial;
        let mut next: Option<Ws> = None;
        loop {
            let ws = match next.take() {
                Some(ws) => Some(ws),
                None => match self.dial(&cancel).await {
                    Ok(ws) => Some(ws),
                    Err(None) => break,
                    Err(Some(error)) => {
                        tracing::warn!(%error, "Slack Socket Mode connection failed.");
                        None
                    }
                },
            };
            if let Some(ws) = ws {
                match self.session(ws, &handler, &mut tasks, &cancel).await {
                    Ended::Cancelled => break,
                    Ended::Refresh(old) => {
                        delay = self.backoff.initial;
                        // The new connection first, then the old one goes.
                        let dialed = self.dial(&cancel).await;
                        close(*old).await;
                        match dialed {
                            Ok(ws) => {
                                next = Some(ws);
                                continue;
                            }
                            Err(None) => break,
                            Err(Some(error)) => {
                                tracing::warn!(%error, "Slack Socket Mode reconnection failed.");
                            }
                        }
                    }
                    Ended::Lost { greeted } => {
                        if greeted {
                            delay = self.backoff.initial;
                        }
                    }
                }
            }
            tracing::info!(
                wait_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "Slack Socket Mode will reconnect."
            );
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(delay) => {}
            }
            delay = delay.saturating_mul(2).min(self.backoff.max);
        }
        while tasks.join_next().await.is_some() {}
        tracing::info!("Slack Socket Mode stopped.");
    }

    /// `apps.connections.open`, then the WebSocket handshake. `Err(None)`: cancelled.
    async fn dial(&self, cancel: &CancellationToken) -> Result<Ws, Option<String>> {
        let connect = async {
            let url = self
                .web
                .apps_connections_open()
                .await
                .map_err(|e| e.to_string())?;
            let handshake = tokio_tungstenite::connect_async_tls_with_config(
                url.as_str(),
                None,
                true,
                Some(Connector::Rustls(Arc::clone(&self.tls))),
            );
            match tokio::time::timeout(CONNECT_TIMEOUT, handshake).await {
                Ok(Ok((ws, _response))) => Ok(ws),
                Ok(Err(e)) => Err(format!("WebSocket handshake failed: {e}")),
                Err(_) => Err("WebSocket handshake timed out".to_owned()),
            }
        };
        tokio::select! {
            () = cancel.cancelled() => Err(None),
            result = connect => result.map_err(Some),
        }
    }

    /// Reads one connection until it ends.
    async fn session<H: SocketHandler>(
        &self,
        mut ws: Ws,
        handler: &Arc<H>,
        tasks: &mut JoinSet<()>,
        cancel: &CancellationToken,
    ) -> Ended {
        let (acks, mut pending) = mpsc::unbounded_channel::<String>();
        let mut greeted = false;
        let hello = tokio::time::sleep(HELLO_TIMEOUT);
        tokio::pin!(hello);
        loop {
            while tasks.try_join_next().is_some() {}
            let frame = tokio::select! {
                () = cancel.cancelled() => {
                    close(ws).await;
                    return Ended::Cancelled;
                }
                () = &mut hello, if !greeted => {
                    tracing::warn!("Slack Socket Mode connection never said hello.");
                    close(ws).await;
                    return Ended::Lost { greeted };
                }
                Some(ack) = pending.recv() => {
                    if let Err(error) = ws.send(Message::text(ack)).await {
                        tracing::warn!(%error, "Slack Socket Mode ack failed.");
                        return Ended::Lost { greeted };
                    }
                    continue;
                }
                frame = ws.next() => frame,
            };
            let text = match frame {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(_))) | None => {
                    tracing::info!("Slack Socket Mode connection closed.");
                    return Ended::Lost { greeted };
                }
                Some(Ok(_)) => continue,
                Some(Err(error)) => {
                    tracing::warn!(%error, "Slack Socket Mode connection lost.");
                    return Ended::Lost { greeted };
                }
            };
            let envelope: Envelope = match serde_json::from_str(text.as_str()) {
                Ok(envelope) => envelope,
                Err(error) => {
                    tracing::warn!(%error, "Slack Socket Mode frame is not an envelope; ignored.");
                    continue;
                }
            };
            match envelope.kind.as_str() {
                "hello" => {
                    greeted = true;
                    tracing::info!("Slack Socket Mode connected.");
                }
                "disconnect" => {
                    tracing::info!(
                        reason = envelope.reason.as_deref().unwrap_or("unknown"),
                        "Slack Socket Mode asked to reconnect."
                    );
                    return Ended::Refresh(Box::new(ws));
                }
                kind => {
                    let Some(id) = envelope.envelope_id else {
                        tracing::debug!(kind, "Slack Socket Mode message without envelope id.");
                        continue;
                    };
                    let respond = kind == "slash_commands" && envelope.accepts_response_payload;
                    let Some(inbound) = decode(kind, envelope.payload) else {
                        // Undecodable: a redelivery would not decode either.
                        if let Err(error) = ws.send(Message::text(ack(&id, None))).await {
                            tracing::warn!(%error, "Slack Socket Mode ack failed.");
                            return Ended::Lost { greeted };
                        }
                        continue;
                    };
                    let handler = Arc::clone(handler);
                    let acks = acks.clone();
                    let kind = kind.to_owned();
                    tasks.spawn(async move {
                        let handled =
                            tokio::time::timeout(RESPONSE_DEADLINE, handler.handle(inbound))
                                .await
                                .unwrap_or_else(|_| {
                                    tracing::warn!(%kind, "Slack envelope missed the ack deadline.");
                                    Handled::Ack(None)
                                });
                        let frame = match handled {
                            Handled::Ack(payload) => ack(&id, payload.filter(|_| respond)),
                            Handled::Retry => {
                                tracing::warn!(%kind, "Slack envelope left unacked; Slack will redeliver it.");
                                return;
                            }
                        };
                        // The connection may be gone; Slack then redelivers or shows an error.
                        let _ = acks.send(frame);
                    });
                }
            }
        }
    }
}

/// The ack frame for an envelope.
fn ack(envelope_id: &str, payload: Option<Value>) -> String {
    let mut frame = json!({ "envelope_id": envelope_id });
    if let (Some(payload), Some(object)) = (payload, frame.as_object_mut()) {
        object.insert("payload".into(), payload);
    }
    frame.to_string()
}

/// Closes a socket, politely and briefly.
async fn close(mut ws: Ws) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(None)).await;
}

/// Decodes an envelope's payload by the envelope's type; `None` (logged) when it cannot.
fn decode(kind: &str, payload: Option<Value>) -> Option<SocketInbound> {
    let Some(payload) = payload else {
        tracing::debug!(kind, "Slack Socket Mode envelope without payload.");
        return None;
    };
    let decoded = match kind {
        "events_api" => serde_json::to_vec(&payload)
            .map_err(|source| DecodeError::Json {
                what: "Events API envelope",
                source,
            })
            .and_then(|body| decode_event_envelope(&body))
            .map(|envelope| SocketInbound::Event(Box::new(envelope))),
        "interactive" => serde_json::from_value::<Interaction>(payload)
            .map_err(|source| DecodeError::Json {
                what: "interaction payload",
                source,
            })
            .map(SocketInbound::Interaction),
        "slash_commands" => decode_slash_command(form_body(&payload).as_bytes())
            .map(|command| SocketInbound::SlashCommand(Box::new(command))),
        other => {
            tracing::debug!(kind = other, "Slack Socket Mode envelope type ignored.");
            return None;
        }
    };
    decoded
        .inspect_err(|error| tracing::warn!(kind, %error, "Slack Socket Mode payload undecodable."))
        .ok()
}

/// A slash command's JSON fields as the form body the HTTP route receives.
fn form_body(payload: &Value) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    if let Some(fields) = payload.as_object() {
        for (key, value) in fields {
            match value {
                Value::String(text) => form.append_pair(key, text),
                Value::Number(_) | Value::Bool(_) => form.append_pair(key, &value.to_string()),
                _ => &mut form,
            };
        }
    }
    form.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_carry_the_envelope_id_and_an_optional_payload() {
        assert_eq!(ack("e1", None), r#"{"envelope_id":"e1"}"#);
        assert_eq!(
            ack("e2", Some(json!({"text": "hi"}))),
            r#"{"envelope_id":"e2","payload":{"text":"hi"}}"#
        );
    }

    #[test]
    fn slash_command_fields_decode_like_the_form_body() {
        let payload = json!({
            "token": "t", "team_id": "T1", "channel_id": "C1", "user_id": "U1",
            "user_name": "ana", "command": "/workmate", "text": "help me & you",
            "response_url": "https://hooks.slack.com/x", "trigger_id": "1.2",
            "is_enterprise_install": false
        });
        let Some(SocketInbound::SlashCommand(command)) = decode("slash_commands", Some(payload))
        else {
            panic!("not a slash command");
        };
        assert_eq!(command.text, "help me & you");
        assert_eq!(command.user_id, "U1");
        assert!(decode("slash_commands", Some(json!({"text": "x"}))).is_none());
        assert!(decode("something_new", Some(json!({}))).is_none());
    }
}
