//! What a platform hands the chat layer: one neutral shape for every platform's messages, clicks
//! and commands.
//!
//! Invariant: a platform maps its verified, decoded delivery to an [`Inbound`] and decides nothing
//! else. Whatever depends on tenants, sessions, roles or the engine (is this text a command, does
//! it quote a reply token, may this person click) is decided once, by the chat layer. An
//! `Inbound` round-trips through JSON, because the chat layer stores it before the platform gets
//! its acknowledgement.

use serde::{Deserialize, Serialize};
use workmate_cards::ButtonAction;
use workmate_protocol::Surface;

/// One delivery from a chat platform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inbound {
    /// The platform it came from.
    pub surface: Surface,
    /// The platform installation it belongs to: Slack team, Feishu tenant key, WeCom corp,
    /// DingTalk corp. It names the tenant.
    pub tenant_key: String,
    /// The platform's id of this delivery (Slack `event_id` or `trigger_id`, Feishu `event_id`,
    /// …): a redelivery carries the same id, and is not applied twice.
    pub delivery_id: String,
    /// Who sent it.
    pub user: InboundUser,
    /// The chat it happened in (channel, group, DM).
    pub chat_id: String,
    /// The thread: the root message of the conversation it belongs to. `None` where the platform
    /// gives none (a native slash command).
    pub thread_id: Option<String>,
    /// Whether the chat is a one-to-one chat with the bot.
    pub direct: bool,
    /// The platform's handle for answering this very delivery, opaque to the chat layer (WeCom's
    /// smart robot answers a message only through it). It travels to the cards of the turn the
    /// delivery starts as [`crate::ChatTarget::reply`]. `None` on platforms that post anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// The platform's id of the message this delivery carries (Slack `<channel>:<ts>`, Feishu
    /// `message_id`), which a later [`InboundKind::Recall`] names; `None` where the platform
    /// recalls nothing or for what is not a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_ref: Option<String>,
    /// What happened.
    pub kind: InboundKind,
}

/// A platform user, as the platform names them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboundUser {
    /// The platform's user id (Slack `U…`, Feishu `open_id`, …).
    pub id: String,
    /// The name the delivery carried, if any; otherwise the platform's profile is asked.
    pub name: Option<String>,
}

/// A file shared with a message, as the platform names it: enough to fetch it later through the
/// platform's file API ([`crate::Platform::download`]), never its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboundFile {
    /// The file's name as shared (`report.pdf`); platforms that give none get one made up from
    /// the kind (`image.png`).
    pub name: String,
    /// Its MIME type when the platform says (`application/pdf`); otherwise read from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    /// Its size in bytes, when the platform says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// What the platform's file API needs to fetch it, opaque to the chat layer (a Slack
    /// download URL, a Feishu `message_id` and `file_key`, a WeCom media id or URL and key, a
    /// DingTalk download code).
    pub handle: String,
}

impl InboundFile {
    /// A file of `name` fetched with `handle`.
    pub fn new(name: impl Into<String>, handle: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            handle: handle.into(),
            ..Self::default()
        }
    }
}

/// What an [`Inbound`] is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InboundKind {
    /// Text addressed to workmate (a mention or a direct message), the mention removed. Text
    /// that starts with `/workmate` is a command on the thread's session; text quoting a reply
    /// token answers that item.
    Message {
        /// The text.
        text: String,
        /// Files shared with it, to be fetched through the platform's file API.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<InboundFile>,
    },
    /// Text in a thread that does not address workmate. It counts only when it quotes a reply
    /// token (`approve [wm:…]`); otherwise it is ignored.
    Reply {
        /// The text.
        text: String,
    },
    /// A click on one of workmate's card buttons.
    Click {
        /// The button's action, decoded from its value.
        action: ButtonAction,
    },
    /// A native slash command (`/workmate …`): the text after the command's name.
    Command {
        /// The text.
        text: String,
    },
    /// A message was recalled or deleted (Feishu `im.message.recalled_v1`, Slack
    /// `message_deleted`): what it started stops, and it never runs if it has not yet. The
    /// delivery's user may be empty (Feishu does not say who recalled).
    Recall {
        /// The recalled message's [`Inbound::message_ref`].
        message_ref: String,
    },
}

impl InboundKind {
    /// A short word for logs and the intake table: `message`, `reply`, `click`, `command` or
    /// `recall`.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Message { .. } => "message",
            Self::Reply { .. } => "reply",
            Self::Click { .. } => "click",
            Self::Command { .. } => "command",
            Self::Recall { .. } => "recall",
        }
    }
}

/// The command a bot-menu item stands for, from its key: the key with `_`, `-` and spaces as word
/// breaks and a leading `workmate` removed (`workmate_stop` and `stop` are `stop`;
/// `automations_list` is `automations list`). Platforms whose bots have menus (Feishu, WeCom's
/// self-built app, DingTalk) map a menu click to a `Command` with it.
pub fn menu_command(event_key: &str) -> String {
    let words: Vec<&str> = event_key
        .split(['_', ' ', '-'])
        .filter(|w| !w.is_empty())
        .collect();
    let words = match words.split_first() {
        Some((first, rest)) if first.eq_ignore_ascii_case("workmate") => rest,
        _ => &words[..],
    };
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::menu_command;

    #[test]
    fn menu_keys_name_commands() {
        assert_eq!(menu_command("workmate_stop"), "stop");
        assert_eq!(menu_command("stop"), "stop");
        assert_eq!(menu_command("automations_list"), "automations list");
        assert_eq!(menu_command("WORKMATE-help"), "help");
        assert_eq!(menu_command(""), "");
    }
}
