//! The JSON frames of a Stream connection: downstream messages and the acks written back.
//!
//! Invariants: every ack carries code 200 and the `messageId` of the message it answers; its
//! `data` is itself a JSON string, as DingTalk expects (never a nested object).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::FrameKind;

/// SYSTEM topic: a keep-alive, answered with its own `data`.
pub const TOPIC_PING: &str = "ping";
/// SYSTEM topic: DingTalk is about to close this connection; open a new one.
pub const TOPIC_DISCONNECT: &str = "disconnect";

/// A downstream message.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Downstream {
    /// `SYSTEM`, `EVENT` or `CALLBACK`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The headers this client reads; DingTalk sends more (appId, time, eventId…).
    pub headers: Headers,
    /// The payload: a JSON string.
    #[serde(default)]
    pub data: String,
}

/// The headers of a downstream message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Headers {
    /// The message's id: the ack's key, and the dedupe key.
    #[serde(default)]
    pub message_id: String,
    /// What the message is about (`ping`, a callback path, an event type).
    #[serde(default)]
    pub topic: String,
}

/// What a downstream message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// SYSTEM `ping`.
    Ping,
    /// SYSTEM `disconnect`.
    Disconnect,
    /// Another SYSTEM topic (e.g. `KEEPALIVE`): nothing to do.
    OtherSystem,
    /// For the handler.
    Handled(FrameKind),
    /// A `type` this client does not know.
    Unknown,
}

impl Downstream {
    /// Reads a text frame.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// What to do with it.
    pub fn class(&self) -> Class {
        match (self.kind.as_str(), self.headers.topic.as_str()) {
            ("SYSTEM", TOPIC_PING) => Class::Ping,
            ("SYSTEM", TOPIC_DISCONNECT) => Class::Disconnect,
            ("SYSTEM", _) => Class::OtherSystem,
            ("EVENT", _) => Class::Handled(FrameKind::Event),
            ("CALLBACK", _) => Class::Handled(FrameKind::Callback),
            _ => Class::Unknown,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ack<'a> {
    code: u16,
    headers: AckHeaders<'a>,
    message: &'static str,
    data: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AckHeaders<'a> {
    content_type: &'static str,
    message_id: &'a str,
}

/// The ack of message `message_id` with `data` (a JSON string) as its data.
pub fn ack(message_id: &str, data: String) -> String {
    let ack = Ack {
        code: 200,
        headers: AckHeaders {
            content_type: "application/json",
            message_id,
        },
        message: "OK",
        data,
    };
    // A struct of strings and a number always serializes.
    serde_json::to_string(&ack).unwrap_or_default()
}

/// The answer to a SYSTEM ping: its own data, echoed.
pub fn pong(ping: &Downstream) -> String {
    ack(&ping.headers.message_id, ping.data.clone())
}

/// The ack of a callback the handler answered with `response`.
pub fn callback_ack(message_id: &str, response: &Value) -> String {
    ack(message_id, json!({ "response": response }).to_string())
}

/// The ack of an event: `SUCCESS` when handled, `LATER` to have it pushed again.
pub fn event_ack(message_id: &str, handled: bool, message: &str) -> String {
    let status = if handled { "SUCCESS" } else { "LATER" };
    ack(
        message_id,
        json!({ "status": status, "message": message }).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_classified_by_type_and_topic() {
        let text = r#"{"specVersion":"1.0","type":"SYSTEM","headers":{"messageId":"m1","topic":"ping","contentType":"application/json"},"data":"{\"opaque\":\"x\"}"}"#;
        let ping = Downstream::parse(text).unwrap();
        assert_eq!(ping.class(), Class::Ping);
        let pong: Value = serde_json::from_str(&pong(&ping)).unwrap();
        assert_eq!(
            pong,
            json!({"code":200,"headers":{"contentType":"application/json","messageId":"m1"},"message":"OK","data":"{\"opaque\":\"x\"}"})
        );
        let event = Downstream::parse(r#"{"type":"EVENT","headers":{"messageId":"m2","topic":"chat_update_title"},"data":"{}"}"#).unwrap();
        assert_eq!(event.class(), Class::Handled(FrameKind::Event));
        let odd = Downstream::parse(r#"{"type":"PUSH","headers":{}}"#).unwrap();
        assert_eq!(odd.class(), Class::Unknown);
    }

    #[test]
    fn acks_carry_their_data_as_a_json_string() {
        let ack: Value = serde_json::from_str(&callback_ack("m", &json!({"a": 1}))).unwrap();
        let data: Value = serde_json::from_str(ack["data"].as_str().unwrap()).unwrap();
        assert_eq!(data, json!({"response": {"a": 1}}));
        let later: Value = serde_json::from_str(&event_ack("m", false, "busy")).unwrap();
        let data: Value = serde_json::from_str(later["data"].as_str().unwrap()).unwrap();
        assert_eq!(data, json!({"status": "LATER", "message": "busy"}));
    }
}
