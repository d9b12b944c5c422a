//! Reading the smart robot's JSON into [`RobotCallback`]s.

use serde::Deserialize;
use serde_json::Value;

use super::event::event_kind;
use super::{
    Chat, Media, MixedItem, Quote, RobotCallback, RobotContent, RobotEvent, RobotFrom,
    RobotMessage, StreamRefresh,
};
use crate::inbound::DecodeError;
use crate::inbound::lenient::{self, field, text};

/// The callback's fields, read leniently; checked and typed by [`decode_robot`].
#[derive(Default, Deserialize)]
#[serde(default)]
struct Raw {
    #[serde(deserialize_with = "lenient::string")]
    msgid: String,
    #[serde(deserialize_with = "lenient::string")]
    aibotid: String,
    #[serde(deserialize_with = "lenient::opt_string")]
    chatid: Option<String>,
    #[serde(deserialize_with = "lenient::opt_string")]
    chattype: Option<String>,
    from: Value,
    #[serde(deserialize_with = "lenient::opt_string")]
    response_url: Option<String>,
    #[serde(deserialize_with = "lenient::opt_i64")]
    create_time: Option<i64>,
    #[serde(deserialize_with = "lenient::string")]
    msgtype: String,
    text: Value,
    mixed: Value,
    image: Value,
    voice: Value,
    file: Value,
    video: Value,
    quote: Value,
    stream: Value,
    event: Value,
}

/// Decodes a smart-robot callback's decrypted JSON.
pub fn decode_robot(plaintext: &str) -> Result<RobotCallback, DecodeError> {
    // A derived struct would also read a JSON array, positionally.
    if !plaintext.trim_start().starts_with('{') {
        return Err(DecodeError(
            "the smart robot's callback is not its JSON: not an object".into(),
        ));
    }
    let raw: Raw = serde_json::from_str(plaintext)
        .map_err(|e| DecodeError(format!("the smart robot's callback is not its JSON: {e}")))?;
    let from = RobotFrom {
        userid: text(&raw.from, &["userid"]).unwrap_or_default(),
        corpid: text(&raw.from, &["corpid"]),
    };
    match raw.msgtype.as_str() {
        "" => Err(DecodeError("a smart-robot callback without msgtype".into())),
        "event" => Ok(RobotCallback::Event(Box::new(RobotEvent {
            msgid: raw.msgid,
            aibotid: raw.aibotid,
            chat: chat(raw.chattype.as_deref(), raw.chatid).ok(),
            from,
            response_url: raw.response_url,
            create_time: raw.create_time,
            kind: event_kind(&raw.event),
        }))),
        msgtype => {
            if from.userid.is_empty() {
                return Err(DecodeError(format!(
                    "a {msgtype} callback without from.userid"
                )));
            }
            if raw.msgid.is_empty() {
                return Err(DecodeError(format!("a {msgtype} callback without msgid")));
            }
            let chat = chat(raw.chattype.as_deref(), raw.chatid)?;
            if msgtype == "stream" {
                let stream_id = text(&raw.stream, &["id"])
                    .ok_or_else(|| DecodeError("a stream refresh without stream.id".into()))?;
                return Ok(RobotCallback::StreamRefresh(StreamRefresh {
                    msgid: raw.msgid,
                    aibotid: raw.aibotid,
                    chat,
                    from,
                    stream_id,
                }));
            }
            let content = match msgtype {
                "text" => RobotContent::Text(text(&raw.text, &["content"]).unwrap_or_default()),
                "mixed" => RobotContent::Mixed(mixed_items(&raw.mixed)),
                "image" => RobotContent::Image(media(&raw.image)),
                "voice" => RobotContent::Voice(text(&raw.voice, &["content"])),
                "file" => RobotContent::File(media(&raw.file)),
                "video" => RobotContent::Video(media(&raw.video)),
                other => RobotContent::Other(other.to_owned()),
            };
            Ok(RobotCallback::Message(Box::new(RobotMessage {
                msgid: raw.msgid,
                aibotid: raw.aibotid,
                chat,
                from,
                response_url: raw.response_url,
                create_time: raw.create_time,
                content,
                quote: quote(&raw.quote),
            })))
        }
    }
}

/// The chat: a group when `chattype` says so, or (without a known `chattype`) when a `chatid`
/// is given; a group must name its `chatid`.
fn chat(chattype: Option<&str>, chatid: Option<String>) -> Result<Chat, DecodeError> {
    let is_group = match chattype {
        Some("group") => true,
        Some("single") => false,
        _ => chatid.is_some(),
    };
    match (is_group, chatid) {
        (false, _) => Ok(Chat::Single),
        (true, Some(chatid)) => Ok(Chat::Group { chatid }),
        (true, None) => Err(DecodeError("a group callback without chatid".into())),
    }
}

/// The parts of `mixed.msg_item`.
fn mixed_items(mixed: &Value) -> Vec<MixedItem> {
    let Some(Value::Array(items)) = field(mixed, &["msg_item"]) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| match text(item, &["msgtype"]).as_deref() {
            Some("text") => MixedItem::Text(content_of(item, "text").unwrap_or_default()),
            Some("image") => MixedItem::Image(item.get("image").map(media).unwrap_or_default()),
            other => MixedItem::Other(other.unwrap_or_default().to_owned()),
        })
        .collect()
}

/// `item[kind].content`.
fn content_of(item: &Value, kind: &str) -> Option<String> {
    item.get(kind).and_then(|v| text(v, &["content"]))
}

/// An attachment's download.
fn media(value: &Value) -> Media {
    Media {
        url: text(value, &["url"]),
        aeskey: text(value, &["aeskey"]),
    }
}

/// The quoted message: its type and its text (text, voice transcription or mixed text parts).
fn quote(quote: &Value) -> Option<Quote> {
    let msgtype = text(quote, &["msgtype"])?;
    let text = match msgtype.as_str() {
        "text" | "voice" => content_of(quote, &msgtype),
        "mixed" => quote
            .get("mixed")
            .and_then(|m| RobotContent::Mixed(mixed_items(m)).text()),
        _ => None,
    };
    Some(Quote { msgtype, text })
}
