//! DingTalk's robot messages as the chat layer's neutral [`Inbound`]s.
//!
//! Invariants: the tenant is the robot's organisation (`chatbotCorpId`, else the sender's); the
//! user is the sender's staff id (their id in the organisation; the encrypted `senderId` only
//! for people outside it); a group's chat is its `conversationId` (`cid…`, which cards and
//! robot messages address as the group's open conversation id), and a one-to-one chat's is the
//! sender's user id, because DingTalk addresses a person's chat with the robot by user id
//! (`IM_ROBOT.<userId>` cards, `oToMessages`), not by its conversation id; such a chat is
//! `direct`; DingTalk has no threads; the delivery id is `msgId`, which a redelivery repeats.
//! A group message reaches the robot only when it @-mentions it, and DingTalk leaves the mention
//! out of the text, so every message with text is a `Message`. A picture, a file, a video or a
//! rich-text message's pictures travel with it as files, fetched later by their download code.

use workmate_adapter::{Inbound, InboundKind, InboundUser};
use workmate_protocol::Surface;

use crate::inbound::RobotMessage;

/// The `Inbound` of a robot message, if it is one workmate acts on (it has text, a tenant and a
/// sender).
pub fn robot_inbound(message: &RobotMessage) -> Option<Inbound> {
    let text = message.text().unwrap_or_default();
    let text = text.trim();
    let files = message.files();
    if text.is_empty() && files.is_empty() {
        return None;
    }
    let tenant_key =
        non_empty(&message.chatbot_corp_id).or_else(|| non_empty(&message.sender_corp_id))?;
    let user = non_empty(&message.sender_staff_id).or_else(|| non_empty(&message.sender_id))?;
    let chat_id = if message.is_direct() {
        user.clone()
    } else {
        message.conversation_id.clone()
    };
    Some(Inbound {
        surface: Surface::Dingtalk,
        tenant_key,
        delivery_id: message.msg_id.clone(),
        user: InboundUser {
            id: user,
            name: non_empty(&message.sender_nick),
        },
        chat_id,
        thread_id: None,
        direct: message.is_direct(),
        reply: None,
        message_ref: None,
        kind: InboundKind::Message {
            text: text.to_owned(),
            files,
        },
    })
}

fn non_empty(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}
