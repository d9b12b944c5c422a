//! Typed decoding of what Feishu sends: event envelopes (schema 2.0 and the v1 shape), the URL
//! verification challenge, message events, bot-menu clicks, recalls and card callbacks.
//!
//! Invariant: decoding works on plaintext JSON that was already verified (and decrypted) by
//! [`crate::webhook`], or that came over the long connection; it never trusts a field it does
//! not need, and an event type workmate does not act on decodes to [`Event::Other`] rather than
//! failing, so Feishu still gets its acknowledgement.
//!
//! What is decoded borrows from the plaintext (a string Feishu escaped is the only copy): an
//! event is read on every delivery, and what the chat layer keeps of it is copied once, when it
//! is mapped.

mod callback;
mod message;

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

pub use callback::{ActionValue, CardAction, CardContext, Operator};
pub use message::{Mention, MessageEvent, MessageId, Sender, UserIds, message_files, message_text};

/// Why a body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a Feishu event or callback: {0}")]
pub struct DecodeError(pub String);

/// One decoded delivery.
#[derive(Clone, Debug, PartialEq)]
pub enum Envelope<'a> {
    /// The URL verification handshake: answer `{"challenge": …}` at once.
    Challenge {
        /// The value to echo.
        challenge: Cow<'a, str>,
        /// The Verification Token it carries.
        token: Option<Cow<'a, str>>,
    },
    /// An event or a card callback.
    Event {
        /// Who sent it and how to dedupe it.
        meta: Meta<'a>,
        /// What happened.
        event: Event<'a>,
    },
}

/// The envelope fields of an event (v2 `header`, or the v1 top level).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta<'a> {
    /// What Feishu repeats on a redelivery: v2 `event_id`, v1 `uuid`, or a legacy card
    /// callback's `token`.
    pub event_id: Cow<'a, str>,
    /// The event type (`im.message.receive_v1`, `card.action.trigger`, …).
    pub event_type: Cow<'a, str>,
    /// The Verification Token the envelope carries.
    pub token: Option<Cow<'a, str>>,
    /// The tenant the event belongs to.
    pub tenant_key: Option<Cow<'a, str>>,
    /// The app it was sent to.
    pub app_id: Option<Cow<'a, str>>,
}

/// The events workmate acts on.
#[derive(Clone, Debug, PartialEq)]
pub enum Event<'a> {
    /// `im.message.receive_v1`.
    Message(Box<MessageEvent<'a>>),
    /// `card.action.trigger` (or the legacy `card.action.trigger_v1` shape).
    CardAction(Box<CardAction<'a>>),
    /// `application.bot.menu_v6`: a click on the bot's menu.
    BotMenu {
        /// Who clicked.
        operator: UserIds<'a>,
        /// The menu item's key.
        event_key: Cow<'a, str>,
    },
    /// `im.message.recalled_v1`: a message was withdrawn.
    Recalled {
        /// The message.
        message_id: Cow<'a, str>,
        /// Its chat.
        chat_id: Cow<'a, str>,
    },
    /// Anything else: acknowledged, not acted on.
    Other(Cow<'a, str>),
}

/// The envelope's fields, read in one pass. Feishu puts `header` before `event`, so the event is
/// usually read straight into its typed struct as the parser reaches it; an `event` that comes
/// first is kept as unparsed text and read once the header is known.
#[derive(Default)]
struct Raw<'a> {
    schema: Option<Cow<'a, str>>,
    header: Option<RawHeader<'a>>,
    event: RawEvent<'a>,
    kind: Option<Cow<'a, str>>,
    challenge: Option<Cow<'a, str>>,
    token: Option<Cow<'a, str>>,
    uuid: Option<Cow<'a, str>>,
    tenant_key: Option<Cow<'a, str>>,
    app_id: Option<Cow<'a, str>>,
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
    Typed(Event<'a>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RawVisitor(PhantomData))
    }
}

/// A string that borrows from the plaintext unless it had to be unescaped.
#[derive(Deserialize)]
#[serde(transparent)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

/// An optional string, borrowed as [`Str`] is: serde's own `Option<Cow<str>>` always copies,
/// even with `#[serde(borrow)]`.
fn optional<'de: 'a, 'a, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    Ok(Option::<Str<'a>>::deserialize(deserializer)?.map(|s| s.0))
}

/// The next value of `map` as an optional string, borrowed as [`optional`] reads it.
fn next_optional<'de: 'a, 'a, M: MapAccess<'de>>(
    map: &mut M,
) -> Result<Option<Cow<'a, str>>, M::Error> {
    Ok(map.next_value::<Option<Str<'a>>>()?.map(|s| s.0))
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
                Field::Schema => raw.schema = next_optional(&mut map)?,
                Field::Header => raw.header = map.next_value()?,
                Field::Event => {
                    raw.event = match &raw.header {
                        Some(header) => {
                            RawEvent::Typed(map.next_value_seed(EventSeed(&header.event_type))?)
                        }
                        None => RawEvent::Text(map.next_value()?),
                    };
                }
                Field::Type => raw.kind = next_optional(&mut map)?,
                Field::Challenge => raw.challenge = next_optional(&mut map)?,
                Field::Token => raw.token = next_optional(&mut map)?,
                Field::Uuid => raw.uuid = next_optional(&mut map)?,
                Field::TenantKey => raw.tenant_key = next_optional(&mut map)?,
                Field::AppId => raw.app_id = next_optional(&mut map)?,
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
struct EventSeed<'t, 'a>(&'t Cow<'a, str>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for EventSeed<'_, 'a> {
    type Value = Event<'a>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Event<'a>, D::Error> {
        event_of(self.0, deserializer)
            .map_err(|e| de::Error::custom(format_args!("{}: {e}", self.0)))
    }
}

#[derive(Deserialize)]
struct RawHeader<'a> {
    #[serde(borrow)]
    event_id: Cow<'a, str>,
    #[serde(borrow)]
    event_type: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "optional")]
    token: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "optional")]
    tenant_key: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "optional")]
    app_id: Option<Cow<'a, str>>,
}

/// Decodes a plaintext body or long-connection payload.
pub fn decode(plaintext: &[u8]) -> Result<Envelope<'_>, DecodeError> {
    let text = std::str::from_utf8(plaintext)
        .map_err(|e| DecodeError(format!("not JSON: not UTF-8 ({e})")))?;
    decode_str(text)
}

/// Decodes a plaintext body already known to be UTF-8 (the parser then checks no string again).
pub fn decode_str(plaintext: &str) -> Result<Envelope<'_>, DecodeError> {
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
        struct Typed<'a> {
            #[serde(default, borrow, rename = "type", deserialize_with = "optional")]
            kind: Option<Cow<'a, str>>,
        }
        let text = match raw.event {
            RawEvent::Text(text) => Some(text),
            RawEvent::Absent | RawEvent::Typed(_) => None,
        };
        let event_type = text
            .and_then(|body| serde_json::from_str::<Typed<'_>>(body.get()).ok())
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
            event_type: Cow::Borrowed("card.action.trigger_v1"),
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
fn event_of<'de: 'a, 'a, D: Deserializer<'de>>(
    event_type: &Cow<'a, str>,
    body: D,
) -> Result<Event<'a>, D::Error> {
    Ok(match &**event_type {
        "im.message.receive_v1" => Event::Message(Box::new(MessageEvent::deserialize(body)?)),
        "card.action.trigger" => Event::CardAction(Box::new(CardAction::deserialize(body)?)),
        "application.bot.menu_v6" => {
            #[derive(Deserialize)]
            struct Menu<'a> {
                #[serde(borrow)]
                operator: MenuOperator<'a>,
                #[serde(borrow)]
                event_key: Cow<'a, str>,
            }
            #[derive(Deserialize)]
            struct MenuOperator<'a> {
                #[serde(borrow)]
                operator_id: UserIds<'a>,
            }
            let menu = Menu::deserialize(body)?;
            Event::BotMenu {
                operator: menu.operator.operator_id,
                event_key: menu.event_key,
            }
        }
        "im.message.recalled_v1" => {
            #[derive(Deserialize)]
            struct Recalled<'a> {
                #[serde(borrow)]
                message_id: Cow<'a, str>,
                #[serde(borrow)]
                chat_id: Cow<'a, str>,
            }
            let r = Recalled::deserialize(body)?;
            Event::Recalled {
                message_id: r.message_id,
                chat_id: r.chat_id,
            }
        }
        _ => {
            IgnoredAny::deserialize(body)?;
            Event::Other(event_type.clone())
        }
    })
}

/// An event body kept as text, read as `event_type`'s struct.
fn event_text<'a>(event_type: &Cow<'a, str>, text: &'a str) -> Result<Event<'a>, DecodeError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    event_of(event_type, &mut deserializer).map_err(|e| DecodeError(format!("{event_type}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MENTION: &str = r#"{"schema":"2.0",
        "header":{"event_id":"ev_1","event_type":"im.message.receive_v1","token":"t",
                  "tenant_key":"tk","app_id":"cli_1"},
        "event":{"sender":{"sender_id":{"open_id":"ou_a"},"sender_type":"user","tenant_key":"tk"},
                 "message":{"message_id":"om_1","root_id":"","chat_id":"oc_1","chat_type":"group",
                            "message_type":"text","content":"{\"text\":\"@_user_1 hi\"}",
                            "mentions":[{"key":"@_user_1","id":{"open_id":"ou_bot"},"name":"bot"}]}}}"#;

    #[test]
    fn plain_strings_are_borrowed_and_escaped_ones_unescaped() {
        let Ok(Envelope::Event {
            meta,
            event: Event::Message(message),
        }) = decode_str(MENTION)
        else {
            panic!("not a message: {:?}", decode_str(MENTION));
        };
        assert!(matches!(meta.event_id, Cow::Borrowed("ev_1")));
        assert!(matches!(meta.tenant_key, Some(Cow::Borrowed("tk"))));
        let sender = &message.sender.sender_id;
        assert!(matches!(sender.open_id, Some(Cow::Borrowed("ou_a"))));
        assert!(matches!(message.message.content, Cow::Owned(_)));
        assert_eq!(message.message.content, r#"{"text":"@_user_1 hi"}"#);
        assert_eq!(
            message_text(&message.message, Some("ou_bot")).as_deref(),
            Some("hi")
        );
    }

    #[test]
    fn an_envelope_with_escaped_strings_decodes_as_the_plain_one() {
        let escaped = MENTION
            .replace(r#""ev_1""#, r#""\u0065v_1""#)
            .replace(r#"message.receive"#, r#"message\u002ereceive"#)
            .replace(r#""tk""#, r#""\u0074k""#)
            .replace(r#""ou_a""#, r#""ou\/a""#);
        let decoded = decode_str(&escaped);
        let Ok(Envelope::Event { meta, event }) = &decoded else {
            panic!("not decoded: {decoded:?}");
        };
        assert!(matches!(meta.event_type, Cow::Owned(_)));
        assert_eq!(meta.event_id, "ev_1");
        assert_eq!(meta.tenant_key.as_deref(), Some("tk"));
        let Event::Message(message) = event else {
            panic!("not a message: {event:?}");
        };
        assert_eq!(message.sender.sender_id.open_id.as_deref(), Some("ou/a"));
        let plain = MENTION.replace(r#""ou_a""#, r#""ou/a""#);
        assert_eq!(decoded, decode_str(&plain));
    }
}
