//! The frames of the long connection: JSON text `{"cmd", "headers": {"req_id"}, "body"}` both
//! ways; WeCom's answers carry `errcode`/`errmsg` and echo the `req_id` they answer.
//!
//! Invariant: a `req_id` the client makes is `<cmd>_<unix ms>_<16 hex digits>`, fresh for every
//! frame, so it never matches another frame's answer; a reply reuses the callback's `req_id`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use workmate_adapter::backoff::random_u64;

/// Subscribes the connection to a bot (`body`: `bot_id`, `secret`); the first frame written.
pub const SUBSCRIBE: &str = "aibot_subscribe";
/// The heartbeat, without a body.
pub const PING: &str = "ping";
/// WeCom pushes a message; `body` is the HTTP callback's JSON, not encrypted.
pub const MSG_CALLBACK: &str = "aibot_msg_callback";
/// WeCom pushes an event (`enter_chat`, `template_card_event`, `feedback_event`, …).
pub const EVENT_CALLBACK: &str = "aibot_event_callback";
/// Answers a message callback, with its `req_id`: a `stream`, `markdown`, `template_card` or
/// `stream_with_template_card` body (a stream sends its full snapshot each time).
pub const RESPOND_MSG: &str = "aibot_respond_msg";
/// Answers an `enter_chat` event, with its `req_id`, within 5 s.
pub const RESPOND_WELCOME: &str = "aibot_respond_welcome_msg";
/// Answers a `template_card_event`, with its `req_id`, within 5 s:
/// `{"response_type":"update_template_card","userids"?:[…],"template_card":{…}}`.
pub const RESPOND_UPDATE: &str = "aibot_respond_update_msg";
/// Sends a message unprompted, with a new `req_id`: `{"chatid":…,"msgtype":…,…}`.
pub const SEND_MSG: &str = "aibot_send_msg";
/// The event WeCom sends before closing a connection that a newer one for the same bot id
/// replaced.
pub const DISCONNECTED_EVENT: &str = "disconnected_event";

/// A fresh `req_id` for a frame of `cmd`.
pub(crate) fn new_req_id(cmd: &str) -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{cmd}_{ms}_{:016x}", random_u64())
}

/// The text of a frame the client writes.
pub(crate) fn encode(cmd: &str, req_id: &str, body: Option<Value>) -> String {
    let mut frame = Map::new();
    frame.insert("cmd".into(), cmd.into());
    frame.insert("headers".into(), json!({ "req_id": req_id }));
    if let Some(body) = body {
        frame.insert("body".into(), body);
    }
    Value::Object(frame).to_string()
}

/// A frame WeCom sent: a callback (`cmd` set, `body` its JSON) or the answer to one of the
/// client's frames (`errcode`, often without `cmd`).
#[derive(Debug, Deserialize)]
pub(crate) struct Inbound {
    #[serde(default)]
    pub(crate) cmd: String,
    #[serde(default)]
    pub(crate) headers: Headers,
    /// `Null` when absent.
    #[serde(default)]
    pub(crate) body: Value,
    /// Absent on callbacks; on an answer, absent is taken as success.
    pub(crate) errcode: Option<i64>,
    #[serde(default)]
    pub(crate) errmsg: String,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Headers {
    #[serde(default)]
    pub(crate) req_id: String,
}

impl Inbound {
    pub(crate) fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// A message or event callback, for the handler.
    pub(crate) fn is_callback(&self) -> bool {
        self.cmd == MSG_CALLBACK || self.cmd == EVENT_CALLBACK
    }

    /// The event saying a newer connection replaced this one.
    pub(crate) fn is_disconnected_event(&self) -> bool {
        self.cmd == EVENT_CALLBACK
            && self.body["event"]["eventtype"].as_str() == Some(DISCONNECTED_EVENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_cmd_req_id_and_an_optional_body() {
        let ping: Value = serde_json::from_str(&encode(PING, "ping_1_a", None)).unwrap();
        assert_eq!(
            ping,
            json!({"cmd": "ping", "headers": {"req_id": "ping_1_a"}})
        );
        let body = json!({"msgtype": "markdown", "markdown": {"content": "hi"}});
        let send: Value = serde_json::from_str(&encode(SEND_MSG, "r", Some(body.clone()))).unwrap();
        assert_eq!(
            send,
            json!({"cmd": SEND_MSG, "headers": {"req_id": "r"}, "body": body})
        );
    }

    #[test]
    fn fresh_req_ids_name_their_command_and_differ() {
        let a = new_req_id(SUBSCRIBE);
        let b = new_req_id(SUBSCRIBE);
        assert_ne!(a, b);
        let rest = a.strip_prefix("aibot_subscribe_").unwrap();
        let (ms, random) = rest.split_once('_').unwrap();
        assert!(ms.parse::<u64>().unwrap() > 1_600_000_000_000, "{a}");
        assert_eq!(random.len(), 16, "{a}");
        assert!(random.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
    }

    #[test]
    fn answers_callbacks_and_the_replacement_event_are_told_apart() {
        let ack =
            Inbound::parse(r#"{"headers":{"req_id":"r1"},"errcode":0,"errmsg":"ok"}"#).unwrap();
        assert_eq!((ack.cmd.as_str(), ack.headers.req_id.as_str()), ("", "r1"));
        assert_eq!((ack.errcode, ack.body.is_null()), (Some(0), true));
        assert!(!ack.is_callback());

        let kicked = json!({"cmd": EVENT_CALLBACK, "headers": {"req_id": "e1"},
            "body": {"msgtype": "event", "event": {"eventtype": DISCONNECTED_EVENT}}});
        let kicked = Inbound::parse(&kicked.to_string()).unwrap();
        assert!(kicked.is_callback() && kicked.is_disconnected_event());

        let entered = json!({"cmd": EVENT_CALLBACK, "headers": {"req_id": "e2"},
            "body": {"msgtype": "event", "event": {"eventtype": "enter_chat"}}});
        let entered = Inbound::parse(&entered.to_string()).unwrap();
        assert!(entered.is_callback() && !entered.is_disconnected_event());

        assert!(Inbound::parse("not json").is_err());
        assert!(Inbound::parse("{}").unwrap().headers.req_id.is_empty());
    }
}
