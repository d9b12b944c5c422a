//! Typed decoding of what Feishu sends: event envelopes (schema 2.0 and the v1 shape), the URL
//! verification challenge, message events, bot-menu clicks, recalls and card callbacks.
//!
//! Invariant: decoding works on plaintext JSON that was already verified (and decrypted) by
//! [`crate::webhook`], or that came over the long connection; it never trusts a field it does
//! not need, and an event type workmate does not act on decodes to [`Event::Other`] rather than
//! failing, so Feishu still gets its acknowledgement.

mod callback;
mod message;

use serde::Deserialize;
use serde_json::Value;

pub use callback::{ActionValue, CardAction, CardContext, Operator};
pub use message::{Mention, MessageEvent, MessageId, Sender, UserIds, message_text};

/// Why a body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a Feishu event or callback: {0}")]
pub struct DecodeError(pub String);

/// One decoded delivery.
#[derive(Clone, Debug, PartialEq)]
pub enum Envelope {
    /// The URL verification handshake: answer `{"challenge": …}` at once.
    Challenge {
        /// The value to echo.
        challenge: String,
        /// The Verification Token it carries.
        token: Option<String>,
    },
    /// An event or a card callback.
    Event {
        /// Who sent it and how to dedupe it.
        meta: Meta,
        /// What happened.
        event: Event,
    },
}

/// The envelope fields of an event (v2 `header`, or the v1 top level).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// What Feishu repeats on a redelivery: v2 `event_id`, v1 `uuid`, or a legacy card
    /// callback's `token`.
    pub event_id: String,
    /// The event type (`im.message.receive_v1`, `card.action.trigger`, …).
    pub event_type: String,
    /// The Verification Token the envelope carries.
    pub token: Option<String>,
    /// The tenant the event belongs to.
    pub tenant_key: Option<String>,
    /// The app it was sent to.
    pub app_id: Option<String>,
}

/// The events workmate acts on.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `im.message.receive_v1`.
    Message(Box<MessageEvent>),
    /// `card.action.trigger` (or the legacy `card.action.trigger_v1` shape).
    CardAction(Box<CardAction>),
    /// `application.bot.menu_v6`: a click on the bot's menu.
    BotMenu {
        /// Who clicked.
        operator: UserIds,
        /// The menu item's key.
        event_key: String,
    },
    /// `im.message.recalled_v1`: a message was withdrawn.
    Recalled {
        /// The message.
        message_id: String,
        /// Its chat.
        chat_id: String,
    },
    /// Anything else: acknowledged, not acted on.
    Other(String),
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    header: Option<RawHeader>,
    #[serde(default)]
    event: Option<Value>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    challenge: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default)]
    tenant_key: Option<String>,
    #[serde(default)]
    app_id: Option<String>,
    /// A legacy card callback is flat: its `action` sits at the top.
    #[serde(default)]
    action: Option<Value>,
}

#[derive(Deserialize)]
struct RawHeader {
    event_id: String,
    event_type: String,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    tenant_key: Option<String>,
    #[serde(default)]
    app_id: Option<String>,
}

/// Decodes a plaintext body or long-connection payload.
pub fn decode(plaintext: &[u8]) -> Result<Envelope, DecodeError> {
    let raw: Value =
        serde_json::from_slice(plaintext).map_err(|e| DecodeError(format!("not JSON: {e}")))?;
    let raw_value = raw;
    let raw: Raw = Raw::deserialize(&raw_value).map_err(|e| DecodeError(e.to_string()))?;
    if raw.kind.as_deref() == Some("url_verification") {
        let challenge = raw
            .challenge
            .ok_or_else(|| DecodeError("url_verification without a challenge".into()))?;
        return Ok(Envelope::Challenge {
            challenge,
            token: raw.token,
        });
    }
    if let Some(header) = raw.header {
        if raw.schema.as_deref().is_some_and(|s| s != "2.0") {
            return Err(DecodeError(format!("unknown schema {:?}", raw.schema)));
        }
        let meta = Meta {
            event_id: header.event_id,
            event_type: header.event_type,
            token: header.token,
            tenant_key: header.tenant_key,
            app_id: header.app_id,
        };
        let body = raw.event.unwrap_or(Value::Null);
        let event = event_of(&meta.event_type, body)?;
        return Ok(Envelope::Event { meta, event });
    }
    if raw.kind.as_deref() == Some("event_callback") {
        // v1: `event.type` names it, `uuid` dedupes it.
        let body = raw.event.unwrap_or(Value::Null);
        let event_type = body
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let meta = Meta {
            event_id: raw
                .uuid
                .ok_or_else(|| DecodeError("a v1 event without a uuid".into()))?,
            event_type: event_type.clone(),
            token: raw.token,
            tenant_key: raw.tenant_key,
            app_id: raw.app_id,
        };
        // v1 events are acknowledged and not acted on: workmate subscribes to v2 ones.
        return Ok(Envelope::Event {
            meta,
            event: Event::Other(event_type),
        });
    }
    if raw.action.is_some() {
        let action = callback::legacy(&raw_value)?;
        let meta = Meta {
            event_id: action.token.clone().unwrap_or_default(),
            event_type: "card.action.trigger_v1".into(),
            token: None,
            tenant_key: action.operator.tenant_key.clone(),
            app_id: raw.app_id,
        };
        if meta.event_id.is_empty() {
            return Err(DecodeError("a card callback without a token".into()));
        }
        return Ok(Envelope::Event {
            meta,
            event: Event::CardAction(Box::new(action)),
        });
    }
    Err(DecodeError(
        "neither a schema 2.0 event, a v1 event, a card callback nor url_verification".into(),
    ))
}

fn event_of(event_type: &str, body: Value) -> Result<Event, DecodeError> {
    let bad = |e: serde_json::Error| DecodeError(format!("{event_type}: {e}"));
    Ok(match event_type {
        "im.message.receive_v1" => {
            Event::Message(Box::new(MessageEvent::deserialize(body).map_err(bad)?))
        }
        "card.action.trigger" => {
            Event::CardAction(Box::new(CardAction::deserialize(body).map_err(bad)?))
        }
        "application.bot.menu_v6" => {
            #[derive(Deserialize)]
            struct Menu {
                operator: MenuOperator,
                event_key: String,
            }
            #[derive(Deserialize)]
            struct MenuOperator {
                operator_id: UserIds,
            }
            let menu = Menu::deserialize(body).map_err(bad)?;
            Event::BotMenu {
                operator: menu.operator.operator_id,
                event_key: menu.event_key,
            }
        }
        "im.message.recalled_v1" => {
            #[derive(Deserialize)]
            struct Recalled {
                message_id: String,
                chat_id: String,
            }
            let r = Recalled::deserialize(body).map_err(bad)?;
            Event::Recalled {
                message_id: r.message_id,
                chat_id: r.chat_id,
            }
        }
        other => Event::Other(other.to_owned()),
    })
}
