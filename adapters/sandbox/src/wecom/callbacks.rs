//! What WeCom posts to the smart robot's callback URL, built and sealed, and workmate's sealed
//! passive replies opened: text messages that @-mention the robot, stream refreshes and
//! template-card clicks.
//!
//! Invariants: every callback has a fresh `msgid` (a message's is the id it is shown under), so
//! workmate's dedupe never drops a new one; every body is encrypted with a fresh random prefix
//! and signed over exactly the ciphertext sent, with a fresh timestamp and nonce in the query;
//! a reply is opened only when its `msgsignature` verifies with the Token.

use serde_json::{Value, json};
use workmate_wxcrypto::Crypto;

use super::{AIBOT_ID, BOT_NAME, CHAT_ID};
use crate::store::unix_now;

/// A callback ready to post: its query string and its body.
#[derive(Debug)]
pub(crate) struct Sealed {
    /// `msg_signature=…&timestamp=…&nonce=…`.
    pub(crate) query: String,
    /// `{"encrypt": …}`.
    pub(crate) body: Vec<u8>,
}

/// A nonce like WeCom's: ten decimal digits.
fn nonce() -> String {
    let random = uuid::Uuid::new_v4().as_u128();
    format!("{:010}", random % 10_000_000_000)
}

/// A fresh callback id.
fn fresh_msgid() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// `plaintext` encrypted (`{"encrypt":…}`) and signed, as WeCom posts it.
pub(crate) fn seal(crypto: &Crypto, plaintext: &Value) -> Sealed {
    let encrypt = crypto.encrypt(&plaintext.to_string());
    let timestamp = unix_now().to_string();
    let nonce = nonce();
    let signature = crypto.signature(&timestamp, &nonce, &encrypt);
    Sealed {
        query: format!("msg_signature={signature}&timestamp={timestamp}&nonce={nonce}"),
        body: json!({ "encrypt": encrypt }).to_string().into_bytes(),
    }
}

/// A passive reply opened: `None` for an empty one, the plaintext JSON otherwise.
pub(crate) fn open(crypto: &Crypto, body: &[u8]) -> Result<Option<Value>, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let sealed: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let text = |name: &str| {
        sealed
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("no {name:?} string in {sealed}"))
    };
    // WeCom's samples write the timestamp as a number; a string is taken too.
    let timestamp = match sealed.get("timestamp") {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => return Err(format!("no \"timestamp\" in {sealed}")),
    };
    let plaintext = crypto
        .decrypt(
            text("msgsignature")?,
            &timestamp,
            text("nonce")?,
            text("encrypt")?,
        )
        .map_err(|e| e.to_string())?;
    serde_json::from_str(&plaintext)
        .map(Some)
        .map_err(|e| format!("the decrypted reply is not JSON: {e}"))
}

/// Who sent a callback.
fn from(userid: &str) -> Value {
    json!({ "userid": userid })
}

/// A text message in the group chat that mentions the robot: `text` is what the person typed
/// after the mention.
pub(crate) fn mention(msgid: &str, userid: &str, text: &str, response_url: &str) -> Value {
    json!({
        "msgid": msgid,
        "aibotid": AIBOT_ID,
        "chatid": CHAT_ID,
        "chattype": "group",
        "from": from(userid),
        "response_url": response_url,
        "msgtype": "text",
        "text": { "content": format!("@{BOT_NAME} {text}") },
    })
}

/// WeCom asking for the stream `stream_id` again, for the person whose message opened it.
pub(crate) fn refresh(stream_id: &str, userid: &str) -> Value {
    json!({
        "msgid": fresh_msgid(),
        "aibotid": AIBOT_ID,
        "chatid": CHAT_ID,
        "chattype": "group",
        "from": from(userid),
        "msgtype": "stream",
        "stream": { "id": stream_id },
    })
}

/// A click on the button `key` of the `button_interaction` card `task_id`.
pub(crate) fn card_click(userid: &str, key: &str, task_id: &str) -> Value {
    json!({
        "msgid": fresh_msgid(),
        "aibotid": AIBOT_ID,
        "chatid": CHAT_ID,
        "chattype": "group",
        "from": from(userid),
        "create_time": unix_now(),
        "msgtype": "event",
        "event": {
            "eventtype": "template_card_event",
            "template_card_event": {
                "card_type": "button_interaction",
                "event_key": key,
                "task_id": task_id,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use workmate_wecom::callback::{CallbackAuth, Query};
    use workmate_wecom::inbound::{RobotCallback, RobotEventKind, decode_robot};

    use super::*;

    const TOKEN: &str = "QDG6eK";
    const KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

    fn crypto() -> Crypto {
        Crypto::new(TOKEN, KEY, "").unwrap()
    }

    /// Opens a sealed callback as workmate does.
    fn received(sealed: &Sealed) -> RobotCallback {
        let auth = CallbackAuth::new(TOKEN, KEY, "").unwrap();
        let query = Query::parse(&sealed.query).unwrap();
        decode_robot(&auth.open_json(&query, &sealed.body).unwrap()).unwrap()
    }

    #[test]
    fn sealed_callbacks_open_and_decode_as_workmate_reads_them() {
        let crypto = crypto();
        let message = mention("m1", "zhangsan", "hi", "http://x/sandbox/wecom/response/m1");
        let RobotCallback::Message(opened) = received(&seal(&crypto, &message)) else {
            panic!("not a message");
        };
        assert_eq!(opened.msgid, "m1");
        assert_eq!(opened.from.userid, "zhangsan");
        assert_eq!(opened.content.text().as_deref(), Some("@workmate hi"));
        let RobotCallback::StreamRefresh(asked) = received(&seal(&crypto, &refresh("wm1", "lisi")))
        else {
            panic!("not a refresh");
        };
        assert_eq!(asked.stream_id, "wm1");
        let RobotCallback::Event(event) = received(&seal(&crypto, &card_click("lisi", "{}", "t1")))
        else {
            panic!("not an event");
        };
        let RobotEventKind::TemplateCard(card) = event.kind else {
            panic!("not a card click");
        };
        assert_eq!(
            (card.event_key.as_str(), card.task_id.as_str()),
            ("{}", "t1")
        );
        // Two seals of one callback differ, and callbacks have fresh ids.
        assert_ne!(seal(&crypto, &message).body, seal(&crypto, &message).body);
        assert_ne!(refresh("s", "u")["msgid"], refresh("s", "u")["msgid"]);
    }

    #[test]
    fn a_reply_opens_only_with_its_signature() {
        let auth = CallbackAuth::new(TOKEN, KEY, "").unwrap();
        let sealed = auth.seal_json(r#"{"msgtype":"stream"}"#, 1_700_000_000, "n1");
        let crypto = crypto();
        assert_eq!(
            open(&crypto, sealed.as_bytes()).unwrap(),
            Some(json!({"msgtype": "stream"}))
        );
        assert_eq!(open(&crypto, b"").unwrap(), None);
        let forged = sealed.replace("\"n1\"", "\"n2\"");
        assert!(open(&crypto, forged.as_bytes()).is_err());
        assert!(open(&crypto, b"{}").is_err());
    }
}
