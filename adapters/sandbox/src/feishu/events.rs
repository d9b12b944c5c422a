//! What Feishu sends workmate, built and sealed: `im.message.receive_v1` events and
//! `card.action.trigger` callbacks (schema 2.0), encrypted with the Encrypt Key and signed.
//!
//! Invariants: every delivery has a fresh `event_id`, so workmate's dedupe never drops a new
//! one; every body is encrypted with a fresh random IV and signed over exactly the bytes sent,
//! with a fresh timestamp and nonce.

use serde_json::{Value, json};
use workmate_feishu::crypto;

use super::{BOT_NAME, BOT_OPEN_ID, FeishuSandbox, TENANT_KEY};
use crate::store::unix_now;

/// The placeholder of the bot's mention in a message's text.
const MENTION_KEY: &str = "@_user_1";

/// A body ready to post, with its signature headers.
#[derive(Debug)]
pub(crate) struct Sealed {
    pub(crate) body: Vec<u8>,
    pub(crate) timestamp: String,
    pub(crate) nonce: String,
    pub(crate) signature: String,
}

/// `plaintext` encrypted (`{"encrypt":…}`) and signed, as Feishu sends it.
pub(crate) fn seal(app: &FeishuSandbox, plaintext: &Value) -> Sealed {
    let iv = *uuid::Uuid::new_v4().as_bytes();
    let sealed = crypto::encrypt_with(&app.encrypt_key, iv, &plaintext.to_string());
    let body = json!({ "encrypt": sealed }).to_string().into_bytes();
    let timestamp = unix_now().to_string();
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let signature = crypto::signature(&timestamp, &nonce, &app.encrypt_key, &body);
    Sealed {
        body,
        timestamp,
        nonce,
        signature,
    }
}

/// A schema 2.0 envelope around `event`.
fn envelope(app: &FeishuSandbox, event_type: &str, event: Value) -> Value {
    let mut envelope = json!({
        "schema": "2.0",
        "header": {
            "event_id": uuid::Uuid::new_v4().simple().to_string(),
            "event_type": event_type,
            "create_time": (unix_now() * 1000).to_string(),
            "token": app.verification_token,
            "app_id": app.app_id,
            "tenant_key": TENANT_KEY,
        },
    });
    envelope["event"] = event;
    envelope
}

/// A person's three ids: the sandbox's `open_id`, and a `union_id` and `user_id` made from it.
fn ids(open_id: &str) -> Value {
    let short = open_id.trim_start_matches("ou_");
    json!({ "open_id": open_id, "union_id": format!("on_{short}"), "user_id": short })
}

/// A message in the group chat that mentions the bot: `text` is what the person typed after
/// the mention, `thread` the thread's root when it is a reply.
pub(crate) fn mention(
    app: &FeishuSandbox,
    sender: &str,
    message_id: &str,
    thread: Option<&str>,
    text: &str,
) -> Value {
    let now = (unix_now() * 1000).to_string();
    let content = json!({ "text": format!("{MENTION_KEY} {text}") }).to_string();
    let root = thread.unwrap_or_default();
    envelope(
        app,
        "im.message.receive_v1",
        json!({
            "sender": {
                "sender_id": ids(sender),
                "sender_type": "user",
                "tenant_key": TENANT_KEY,
            },
            "message": {
                "message_id": message_id,
                "root_id": root,
                "parent_id": root,
                "create_time": now,
                "update_time": now,
                "chat_id": super::CHAT_ID,
                "chat_type": "group",
                "message_type": "text",
                "content": content,
                "mentions": [{
                    "key": MENTION_KEY,
                    "id": ids(BOT_OPEN_ID),
                    "name": BOT_NAME,
                    "tenant_key": TENANT_KEY,
                }],
            },
        }),
    )
}

/// A click on a card's button: `value` is the button's callback value.
pub(crate) fn card_action(
    app: &FeishuSandbox,
    operator: &str,
    message_id: &str,
    chat_id: &str,
    value: Value,
) -> Value {
    let mut event = json!({
        "operator": ids(operator),
        "token": format!("c-{}", uuid::Uuid::new_v4().simple()),
        "action": { "tag": "button" },
        "host": "im_message",
        "context": { "open_message_id": message_id, "open_chat_id": chat_id },
    });
    event["operator"]["tenant_key"] = TENANT_KEY.into();
    event["action"]["value"] = value;
    envelope(app, "card.action.trigger", event)
}

#[cfg(test)]
mod tests {
    use workmate_feishu::inbound::{Envelope, Event, decode};

    use super::*;

    fn app() -> FeishuSandbox {
        FeishuSandbox {
            app_id: "cli_x".into(),
            app_secret: "s".into(),
            encrypt_key: "k".into(),
            verification_token: "v".into(),
        }
    }

    #[test]
    fn a_sealed_mention_opens_and_decodes_as_a_message_to_the_bot() {
        let app = app();
        let plaintext = mention(&app, "ou_sandbox_alice", "om_1", Some("om_0"), "hi");
        let sealed = seal(&app, &plaintext);
        let auth = workmate_feishu::webhook::WebhookAuth::new(Some("k".into()), Some("v".into()));
        let signed = workmate_feishu::webhook::Signed {
            timestamp: &sealed.timestamp,
            nonce: &sealed.nonce,
            signature: &sealed.signature,
        };
        let mut opened = String::new();
        let Ok(Envelope::Event { meta, event }) = auth.open(signed, &sealed.body, &mut opened)
        else {
            panic!("not opened");
        };
        assert_eq!(meta.tenant_key.as_deref(), Some(TENANT_KEY));
        let Event::Message(message) = event else {
            panic!("not a message");
        };
        assert_eq!(message.message.thread_root(), "om_0");
        let text = workmate_feishu::inbound::message_text(&message.message, Some(BOT_OPEN_ID));
        assert_eq!(text.as_deref(), Some("hi"));
        // Two seals of one event differ (IV, nonce), and every event id is new.
        assert_ne!(seal(&app, &plaintext).body, sealed.body);
        assert_ne!(
            mention(&app, "ou_a", "om_1", None, "hi")["header"]["event_id"],
            plaintext["header"]["event_id"]
        );
        assert!(decode(plaintext.to_string().as_bytes()).is_ok());
    }
}
