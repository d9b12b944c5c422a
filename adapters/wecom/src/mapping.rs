//! WeCom's decoded callbacks as the chat layer's neutral [`Inbound`]s.
//!
//! Invariants:
//! - Only what a person wrote or clicked becomes an `Inbound`: stream refreshes, `enter_chat`,
//!   `enter_agent`, feedback and other events, and messages with neither text nor a file are
//!   answered by the surface or dropped here. A robot message's images and files travel with it,
//!   to be fetched (and decrypted) by the platform.
//! - The tenant is the configured corp id: a smart-robot callback names no corp for the corp's
//!   own people (`from.corpid` is given only for people from another corp).
//! - A group's chat is its `chatid`; a one-to-one chat (every self-built-app callback) is the
//!   person's userid, with `direct: true`. WeCom has no threads: `thread_id` is `None`.
//! - A smart robot receives a group message only when it is @-mentioned, so every text is a
//!   `Message` (never a `Reply`), with the leading mention removed in groups.
//! - A click is a `Click` only when its button key is a workmate [`ButtonAction`] as JSON; a menu
//!   item is a `Command`.
//! - The delivery id is what WeCom repeats on a redelivery: `msgid` (robot) or `MsgId` (app).
//!   App events carry no `MsgId`; theirs is `AgentID:FromUserName:CreateTime:Event:` followed by
//!   the card's `TaskId` (card click) or the menu item's `EventKey` (menu click), the fields a
//!   redelivery repeats.

use workmate_adapter::{Inbound, InboundFile, InboundKind, InboundUser, menu_command};
use workmate_cards::ButtonAction;
use workmate_protocol::Surface;

use crate::inbound::{
    AppCallback, AppEventKind, AppMeta, CardEvent, Chat, Media, MixedItem, RobotCallback,
    RobotContent, RobotEvent, RobotEventKind, RobotMessage,
};

/// The `Inbound` of a smart-robot callback, if it is one workmate acts on. `corp_id` is the
/// configured corp; `bot_name` is the robot's display name when known (a name with spaces is
/// removed from the front of group text only when it is given).
pub fn robot_inbound(
    callback: &RobotCallback,
    corp_id: &str,
    bot_name: Option<&str>,
) -> Option<Inbound> {
    match callback {
        RobotCallback::Message(message) => robot_message(message, corp_id, bot_name),
        RobotCallback::Event(event) => robot_event(event, corp_id),
        RobotCallback::StreamRefresh(_) => None,
    }
}

/// The handle prefix of a file sent to the self-built app: its media id follows.
pub const APP_MEDIA: &str = "media:";

/// The `Inbound` of a self-built-app callback, if it is one workmate acts on. `corp_id` is the
/// configured corp.
pub fn app_inbound(callback: &AppCallback, corp_id: &str) -> Option<Inbound> {
    let (meta, delivery_id, kind) = match callback {
        AppCallback::Text(text) => {
            let delivery_id = match &text.msg_id {
                Some(id) => id.clone(),
                None => app_event_id(&text.meta, "text", ""),
            };
            let kind = InboundKind::Message {
                text: text.content.trim().to_owned(),
                files: Vec::new(),
            };
            (&text.meta, delivery_id, kind)
        }
        AppCallback::Event(event) => match &event.kind {
            AppEventKind::TemplateCard(card) => {
                let action = button_action_logged(card)?;
                let id = app_event_id(&event.meta, "template_card_event", &card.task_id);
                (&event.meta, id, InboundKind::Click { action })
            }
            AppEventKind::Click { event_key } => {
                let id = app_event_id(&event.meta, "click", event_key);
                let text = menu_command(event_key);
                (&event.meta, id, InboundKind::Command { text })
            }
            AppEventKind::EnterAgent | AppEventKind::Other(_) => return None,
        },
        // An image or a file sent to the app, fetched later by its media id.
        AppCallback::Other(other) => {
            let media_id = other.media_id.as_ref()?;
            let (name, mime) = match other.msg_type.as_str() {
                "image" => ("image", Some("image/*")),
                "file" => ("file", None),
                _ => return None,
            };
            let delivery_id = match &other.msg_id {
                Some(id) => id.clone(),
                None => app_event_id(&other.meta, &other.msg_type, media_id),
            };
            let file = InboundFile {
                mime: mime.map(str::to_owned),
                ..InboundFile::new(name, format!("{APP_MEDIA}{media_id}"))
            };
            let kind = InboundKind::Message {
                text: String::new(),
                files: vec![file],
            };
            (&other.meta, delivery_id, kind)
        }
    };
    Some(Inbound {
        surface: Surface::Wecom,
        tenant_key: corp_id.to_owned(),
        delivery_id,
        user: user(&meta.from_user),
        chat_id: meta.from_user.clone(),
        thread_id: None,
        direct: true,
        reply: None,
        message_ref: None,
        kind,
    })
}

/// Group text without the robot's leading mention: `@bot_name` when the name is given and the
/// text starts with it, otherwise the leading `@…` word. Trimmed.
pub fn strip_mention<'a>(text: &'a str, bot_name: Option<&str>) -> &'a str {
    let text = text.trim();
    let Some(rest) = text.strip_prefix('@') else {
        return text;
    };
    let named = bot_name
        .filter(|name| !name.is_empty())
        .and_then(|name| rest.strip_prefix(name))
        .filter(|after| after.is_empty() || after.starts_with(char::is_whitespace));
    match named {
        Some(after) => after.trim(),
        None => rest
            .split_once(char::is_whitespace)
            .map_or("", |(_, after)| after.trim()),
    }
}

/// The workmate action a card button's `key` carries (the action as compact JSON). The key
/// comes back from WeCom: the caller must still check the clicker's authority and that the
/// item is still pending (or the turn still running).
pub fn button_action(key: &str) -> Option<ButtonAction> {
    serde_json::from_str(key).ok()
}

/// The files of a robot message, each handle `{"url": …, "aeskey": …}` (the key only over the
/// long connection; callbacks' files are encrypted with the robot's EncodingAESKey).
fn robot_files(content: &RobotContent) -> Vec<InboundFile> {
    let file = |media: &Media, name: &str, mime: Option<&str>| {
        let handle = media.url.as_ref().map_or_else(String::new, |url| {
            serde_json::json!({"url": url, "aeskey": media.aeskey}).to_string()
        });
        InboundFile {
            mime: mime.map(str::to_owned),
            ..InboundFile::new(name, handle)
        }
    };
    match content {
        RobotContent::Image(media) => vec![file(media, "image", Some("image/*"))],
        RobotContent::File(media) => vec![file(media, "file", None)],
        RobotContent::Video(media) => vec![file(media, "video", Some("video/mp4"))],
        RobotContent::Mixed(items) => items
            .iter()
            .filter_map(|item| match item {
                MixedItem::Image(media) => Some(file(media, "image", Some("image/*"))),
                MixedItem::Text(_) | MixedItem::Other(_) => None,
            })
            .collect(),
        RobotContent::Text(_) | RobotContent::Voice(_) | RobotContent::Other(_) => Vec::new(),
    }
}

fn robot_message(message: &RobotMessage, corp_id: &str, bot_name: Option<&str>) -> Option<Inbound> {
    let files = robot_files(&message.content);
    let text = match message.content.text() {
        Some(text) => text,
        None if !files.is_empty() => String::new(),
        None => return None,
    };
    let (chat_id, direct, text) = match &message.chat {
        Chat::Group { chatid } => (chatid.clone(), false, strip_mention(&text, bot_name)),
        Chat::Single => (message.from.userid.clone(), true, text.trim()),
    };
    Some(Inbound {
        surface: Surface::Wecom,
        tenant_key: corp_id.to_owned(),
        delivery_id: message.msgid.clone(),
        user: user(&message.from.userid),
        chat_id,
        thread_id: None,
        direct,
        reply: None,
        message_ref: None,
        kind: InboundKind::Message {
            text: text.to_owned(),
            files,
        },
    })
}

fn robot_event(event: &RobotEvent, corp_id: &str) -> Option<Inbound> {
    let card = match &event.kind {
        RobotEventKind::TemplateCard(card) => card,
        RobotEventKind::EnterChat
        | RobotEventKind::Feedback(_)
        | RobotEventKind::Disconnected
        | RobotEventKind::Other(_) => return None,
    };
    let userid = &event.from.userid;
    if userid.is_empty() {
        return None;
    }
    let action = button_action_logged(card)?;
    let (chat_id, direct) = match &event.chat {
        Some(Chat::Group { chatid }) => (chatid.clone(), false),
        Some(Chat::Single) | None => (userid.clone(), true),
    };
    let delivery_id = if event.msgid.is_empty() {
        let time = event.create_time.map(|t| t.to_string()).unwrap_or_default();
        format!(
            "{}:{userid}:{time}:template_card_event:{}",
            event.aibotid, card.task_id
        )
    } else {
        event.msgid.clone()
    };
    Some(Inbound {
        surface: Surface::Wecom,
        tenant_key: corp_id.to_owned(),
        delivery_id,
        user: user(userid),
        chat_id,
        thread_id: None,
        direct,
        reply: None,
        message_ref: None,
        kind: InboundKind::Click { action },
    })
}

/// The click's action, or `None` (logged) for a key that is not a workmate button.
fn button_action_logged(card: &CardEvent) -> Option<ButtonAction> {
    let action = button_action(&card.event_key);
    if action.is_none() {
        tracing::debug!(
            task_id = %card.task_id,
            card_type = %card.card_type,
            "A WeCom card click whose key is not a workmate button; ignored."
        );
    }
    action
}

/// The delivery id of an app callback without a `MsgId`.
fn app_event_id(meta: &AppMeta, event: &str, detail: &str) -> String {
    let agent = meta.agent_id.as_deref().unwrap_or_default();
    format!(
        "{agent}:{}:{}:{event}:{detail}",
        meta.from_user, meta.create_time
    )
}

fn user(id: &str) -> InboundUser {
    InboundUser {
        id: id.to_owned(),
        name: None,
    }
}

#[cfg(test)]
mod tests {
    use super::strip_mention;

    #[test]
    fn leading_mentions_are_stripped() {
        assert_eq!(strip_mention("@机器人 hello", None), "hello");
        assert_eq!(strip_mention("  @bot\u{2005}hi there ", None), "hi there");
        assert_eq!(strip_mention("@bot", None), "");
        assert_eq!(strip_mention("no mention", None), "no mention");
        assert_eq!(strip_mention("@My Bot do it", Some("My Bot")), "do it");
        // A name that does not match falls back to the leading word.
        assert_eq!(strip_mention("@bot2 do it", Some("bot")), "do it");
        assert_eq!(strip_mention("email a@b.c", None), "email a@b.c");
    }
}
