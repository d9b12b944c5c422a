//! Socket Mode: Slack delivers events, interactions and slash commands over a WebSocket that
//! workmate opens, instead of POSTing them to workmate's HTTP routes. The connection runs on
//! the kit's supervisor ([`workmate_adapter::ws`]); this module is Slack's part of it.
//!
//! Invariants: the connection is authenticated by the app-level token (`xapp-…`) that
//! `apps.connections.open` takes, so no request signature applies; an envelope is acked with
//! `{"envelope_id": …}` once its handler took it (with the optional response payload of a slash
//! command), or when the handler has not answered within [`RESPONSE_DEADLINE`], or at once when
//! its payload cannot be decoded; an envelope the handler could not take ([`Handled::Retry`]) is
//! left unacked, so Slack delivers it again; a payload is decoded with the same decoders the
//! HTTP routes use; on `disconnect` a new connection is opened before the old one is closed; a
//! connection that does not say `hello` within [`HELLO_TIMEOUT`] is given up; a lost connection
//! is reopened after a jittered backoff from [`Backoff::initial`] up to [`Backoff::max`] that
//! resets once a connection said `hello`. WebSocket pings are answered by tungstenite itself.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use workmate_adapter::backoff;
use workmate_adapter::ws::{self, Connector, Ended, Message, Protocol, Read, Settings, Status};

use crate::inbound::{
    DecodeError, EventEnvelope, Interaction, SlashCommand, decode_event_envelope,
    decode_slash_command,
};
use crate::web::{SlackWeb, WebError};

/// How long a slash-command handler may take to produce the ack's payload (Slack allows 3 s).
pub const RESPONSE_DEADLINE: Duration = Duration::from_millis(2500);
/// How long a new connection may take to say `hello`.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

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
    connector: Connector,
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

impl SocketMode {
    /// A client calling `apps.connections.open` at `api_base` with `app_token`.
    pub fn new(api_base: &str, app_token: SecretString) -> Result<Self, WebError> {
        Ok(Self {
            web: SlackWeb::new(api_base, app_token)?,
            connector: Connector::new().map_err(WebError::Config)?,
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
        let settings = Settings {
            connect_timeout: workmate_adapter::net::CALL_TIMEOUT,
            drain: RESPONSE_DEADLINE * 2,
            max_in_flight: 64,
            max_waiting: None,
        };
        let backoff = backoff::Backoff::new(self.backoff.initial, self.backoff.max);
        let mut session = Session {
            mode: &self,
            handler,
            backoff,
            greeted: false,
        };
        let status = watch::Sender::new(Status::Idle);
        let _ = ws::supervise(&mut session, &settings, &status, &cancel).await;
    }
}

/// One run of a [`SocketMode`] client.
struct Session<'a, H> {
    mode: &'a SocketMode,
    handler: Arc<H>,
    backoff: backoff::Backoff,
    /// The current connection said `hello`.
    greeted: bool,
}

impl<H: SocketHandler> Protocol for Session<'_, H> {
    type Error = String;
    const NAME: &'static str = "Slack Socket Mode";

    /// `apps.connections.open`, then the WebSocket handshake.
    async fn dial(&mut self) -> Result<ws::Ws, String> {
        self.greeted = false;
        let url = self.mode.web.apps_connections_open().await;
        let url = url.map_err(|e| e.to_string())?;
        let ws = self.mode.connector.open(&url).await;
        ws.map_err(|e| format!("WebSocket handshake failed: {e}"))
    }

    fn unavailable(reason: String) -> String {
        reason
    }

    fn silence(&self) -> Option<Duration> {
        (!self.greeted).then_some(HELLO_TIMEOUT)
    }

    fn read(&mut self, message: Message) -> Read<String> {
        let Ok(text) = message.to_text() else {
            return Read::Skip;
        };
        let envelope: Envelope = match serde_json::from_str(text) {
            Ok(envelope) => envelope,
            Err(error) => {
                tracing::warn!(%error, "Slack Socket Mode frame is not an envelope; ignored.");
                return Read::Skip;
            }
        };
        let kind = envelope.kind.as_str();
        match kind {
            "hello" => {
                self.greeted = true;
                tracing::info!("Slack Socket Mode connected.");
                return Read::Skip;
            }
            "disconnect" => {
                let reason = envelope.reason.as_deref().unwrap_or("unknown");
                tracing::info!(reason, "Slack Socket Mode asked to reconnect.");
                return Read::Move;
            }
            _ => {}
        }
        let Some(id) = envelope.envelope_id else {
            tracing::debug!(kind, "Slack Socket Mode message without envelope id.");
            return Read::Skip;
        };
        let respond = kind == "slash_commands" && envelope.accepts_response_payload;
        let Some(inbound) = decode(kind, envelope.payload) else {
            // Undecodable: a redelivery would not decode either.
            return Read::Reply(Message::text(ack(&id, None)));
        };
        let handler = Arc::clone(&self.handler);
        let kind = kind.to_owned();
        Read::Deliver(Box::pin(async move {
            let handled = tokio::time::timeout(RESPONSE_DEADLINE, handler.handle(inbound)).await;
            match handled.unwrap_or_else(|_| {
                tracing::warn!(%kind, "Slack envelope missed the ack deadline.");
                Handled::Ack(None)
            }) {
                Handled::Ack(payload) => Some(Message::text(ack(&id, payload.filter(|_| respond)))),
                Handled::Retry => {
                    tracing::warn!(%kind, "Slack envelope left unacked; Slack will redeliver it.");
                    None
                }
            }
        }))
    }

    fn reconnect(&mut self, ended: &Ended<String>) -> Result<Duration, String> {
        Ok(self.backoff.after(ended))
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
