//! Prompts (approval and question cards) on the smart robot: a `button_interaction` template
//! card riding on the message's stream.
//!
//! WeCom refuses a template card sent on its own while the message's stream is open (errcode
//! 6000), so the first prompt of a stream goes with it as `stream_with_template_card`: in the
//! answer to the next refresh (callback mode) or pushed at once with the message's `req_id` (long
//! connection). A stream carries one card; a further prompt is sent on its own, through the
//! `response_url` or `aibot_send_msg`.
//!
//! Invariant: a prompt's message id is `card:<task_id>`, whichever way it went.

use serde_json::{Value, json};
use workmate_adapter::{AdapterError, ChatTarget};

use super::{CARD_PREFIX, NO_HANDLE, ReplyHandle, WeComPlatform, failed, lock};
use crate::ws::{RESPOND_MSG, SEND_MSG};

impl WeComPlatform {
    /// Shows the template card `card` for the message `handle` answers; its message id.
    pub(super) async fn post_prompt(
        &self,
        handle: &ReplyHandle,
        target: &ChatTarget,
        card: &Value,
    ) -> Result<String, AdapterError> {
        let task = card.get("task_id").and_then(Value::as_str).unwrap_or("");
        let message_id = format!("{CARD_PREFIX}{task}");
        if handle.stream.is_some() {
            let (stream_id, stream) = self.bound(handle, &target.chat_id)?;
            let riding = {
                let mut s = lock(&stream);
                s.attach_card(card.clone())
                    .then(|| (s.snapshot(std::time::Instant::now()), s.req_id.clone()))
            };
            match (riding, &self.socket) {
                (Some((snapshot, Some(req_id))), Some(sender)) => {
                    let body = with_card(&stream_id, &snapshot.content, snapshot.finish, card);
                    sender
                        .respond(&req_id, RESPOND_MSG, body)
                        .await
                        .map_err(failed)?;
                    lock(&stream).card_shown();
                    return Ok(message_id);
                }
                // Callback mode: the next refresh's answer carries it.
                (Some(_), None) => return Ok(message_id),
                _ => {}
            }
        }
        if let Some(sender) = &self.socket {
            let body = json!({ "chatid": target.chat_id, "msgtype": "template_card", "template_card": card });
            sender.send(SEND_MSG, body).await.map_err(failed)?;
        } else {
            let url = handle
                .response_url
                .as_deref()
                .ok_or_else(|| AdapterError::Rejected(NO_HANDLE.into()))?;
            let body = json!({ "msgtype": "template_card", "template_card": card });
            self.answer_once(url, &body).await?;
        }
        Ok(message_id)
    }
}

/// A stream snapshot with a template card riding on it.
pub(super) fn with_card(stream_id: &str, content: &str, finish: bool, card: &Value) -> Value {
    json!({
        "msgtype": "stream_with_template_card",
        "stream": { "id": stream_id, "finish": finish, "content": content },
        "template_card": card,
    })
}
