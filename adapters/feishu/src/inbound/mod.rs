//! Typed decoding of what Feishu sends: event envelopes (schema 2.0 and the v1 shape), the URL
//! verification challenge, message events, bot-menu clicks, recalls and card callbacks.
//!
//! Invariant: decoding works on plaintext JSON that was already verified (and decrypted) by
//! [`crate::webhook`], or that came over the long connection; it never trusts a field it does
//! not need, and an event type workmate does not act on decodes to [`Event::Other`] rather than
//! failing, so Feishu still gets its acknowledgement.

mod callback;
mod message;

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

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

/// The envelope's fields, read in one pass. Feishu puts `header` before `event`, so the event is
/// usually read straight into its typed struct as the parser reaches it; an `event` that comes
/// first is kept as unparsed text and read once the header is known.
#[derive(Default)]
struct Raw<'a> {
    schema: Option<String>,
    header: Option<RawHeader>,
    event: RawEvent<'a>,
    kind: Option<String>,
    challenge: Option<String>,
    token: Option<String>,
    uuid: Option<String>,
    tenant_key: Option<String>,
    app_id: Option<String>,
    /// A legacy card callback is flat: its `action` sits at the top.
    has_action: bool,
}

/// The `event` field as the one pass left it.
#[derive(Default)]
enum RawEvent<'a> {
    #[default]
    Absent,
    /// Read before the header (or in a v1 envelope): its text.
    Text(&'a RawValue),
    /// Read after the header, by its type.
    Typed(Event),
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RawVisitor(PhantomData))
    }
}

/// The envelope's keys, read without copying them.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Field {
    Schema,
    Header,
    Event,
    Type,
    Challenge,
    Token,
    Uuid,
    TenantKey,
    AppId,
    Action,
    #[serde(other)]
    Other,
}

struct RawVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for RawVisitor<'a> {
    type Value = Raw<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Feishu event, callback or url_verification object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Raw<'a>, M::Error> {
        let mut raw = Raw::default();
        while let Some(key) = map.next_key::<Field>()? {
            match key {
                Field::Schema => raw.schema = map.next_value()?,
                Field::Header => raw.header = map.next_value()?,
                Field::Event => {
                    raw.event = match &raw.header {
                        Some(header) => {
                            RawEvent::Typed(map.next_value_seed(EventSeed(&header.event_type))?)
                        }
                        None => RawEvent::Text(map.next_value()?),
                    };
                }
                Field::Type => raw.kind = map.next_value()?,
                Field::Challenge => raw.challenge = map.next_value()?,
                Field::Token => raw.token = map.next_value()?,
                Field::Uuid => raw.uuid = map.next_value()?,
                Field::TenantKey => raw.tenant_key = map.next_value()?,
                Field::AppId => raw.app_id = map.next_value()?,
                Field::Action => {
                    map.next_value::<IgnoredAny>()?;
                    raw.has_action = true;
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(raw)
    }
}

/// Reads an event body as the type its header names.
struct EventSeed<'t>(&'t str);

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = Event;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Event, D::Error> {
        event_of(self.0, deserializer)
            .map_err(|e| de::Error::custom(format_args!("{}: {e}", self.0)))
    }
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
    let text = std::str::from_utf8(plaintext)
        .map_err(|e| DecodeError(format!("not JSON: not UTF-8 ({e})")))?;
    decode_str(text)
}

/// Decodes a plaintext body already known to be UTF-8 (the parser then checks no string again).
pub fn decode_str(plaintext: &str) -> Result<Envelope, DecodeError> {
    let raw: Raw<'_> = serde_json::from_str(plaintext).map_err(|e| match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            DecodeError(format!("not JSON: {e}"))
        }
        _ => DecodeError(e.to_string()),
    })?;
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
        let event = match raw.event {
            RawEvent::Typed(event) => event,
            RawEvent::Text(text) => event_text(&meta.event_type, text.get())?,
            RawEvent::Absent => event_text(&meta.event_type, "null")?,
        };
        return Ok(Envelope::Event { meta, event });
    }
    if raw.kind.as_deref() == Some("event_callback") {
        // v1: `event.type` names it, `uuid` dedupes it.
        #[derive(Deserialize)]
        struct Typed {
            #[serde(default, rename = "type")]
            kind: Option<String>,
        }
        let text = match raw.event {
            RawEvent::Text(text) => Some(text),
            RawEvent::Absent | RawEvent::Typed(_) => None,
        };
        let event_type = text
            .and_then(|body| serde_json::from_str::<Typed>(body.get()).ok())
            .and_then(|typed| typed.kind)
            .unwrap_or_default();
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
    if raw.has_action {
        let action = callback::legacy(plaintext)?;
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

/// An event body read as `event_type`'s struct; any other type is skipped unread.
fn event_of<'de, D: Deserializer<'de>>(event_type: &str, body: D) -> Result<Event, D::Error> {
    Ok(match event_type {
        "im.message.receive_v1" => Event::Message(Box::new(MessageEvent::deserialize(body)?)),
        "card.action.trigger" => Event::CardAction(Box::new(CardAction::deserialize(body)?)),
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
            let menu = Menu::deserialize(body)?;
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
            let r = Recalled::deserialize(body)?;
            Event::Recalled {
                message_id: r.message_id,
                chat_id: r.chat_id,
            }
        }
        other => {
            IgnoredAny::deserialize(body)?;
            Event::Other(other.to_owned())
        }
    })
}

/// An event body kept as text, read as `event_type`'s struct.
fn event_text(event_type: &str, text: &str) -> Result<Event, DecodeError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    event_of(event_type, &mut deserializer).map_err(|e| DecodeError(format!("{event_type}: {e}")))
}
