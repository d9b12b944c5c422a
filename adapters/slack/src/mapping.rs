//! Slack's deliveries as the chat layer's neutral [`Inbound`]s.
//!
//! Invariants: only what a person wrote or clicked becomes an `Inbound` (bots, edits, joins and
//! foreign buttons are dropped here); a mention or direct message is a `Message` with the
//! leading mention of the bot removed; a channel message that only quotes a reply token is a
//! `Reply` (unless it mentions the bot, whose `app_mention` carries it already); a deleted message
//! (`message_deleted`) is a `Recall` of its `<channel>:<ts>`, which every message carries as its
//! `message_ref`; the delivery id
//! is what Slack repeats on a redelivery: the event id for events, the trigger id for clicks and
//! slash commands.

use serde_json::{Value, json};
use workmate_adapter::{CommandReply, Inbound, InboundFile, InboundKind, InboundUser};
use workmate_protocol::Surface;

use crate::blocks::decode_button_value;
use crate::inbound::{BlockActions, Event, EventCallback, MessageEvent, SlashCommand};

/// A reply token's opening, as the chat layer writes it.
const TOKEN_OPEN: &str = "[wm:";

/// The `Inbound` of an Events API callback, if it is one workmate acts on. `bot_user` is the
/// bot's user id when known; without it, any leading mention is taken to address the bot.
pub fn event_inbound(callback: EventCallback, bot_user: Option<&str>) -> Option<Inbound> {
    let (team, event_id) = (callback.team_id?, callback.event_id?);
    if let Event::Message(message) = &callback.event
        && let (Some(deleted), Some(channel)) = (message.deleted(), message.channel.as_deref())
    {
        return Some(Inbound {
            surface: Surface::Slack,
            tenant_key: team,
            delivery_id: event_id,
            // Slack says whose message it was in `previous_message`, not who deleted it.
            user: InboundUser::default(),
            chat_id: channel.to_owned(),
            thread_id: message.thread_ts.clone(),
            direct: message.is_direct_message(),
            reply: None,
            message_ref: None,
            kind: InboundKind::Recall {
                message_ref: message_ref(channel, deleted),
            },
        });
    }
    let (message, kind) = match callback.event {
        Event::AppMention(message) => {
            let text = strip_mention(&message.text, bot_user);
            let files = shared_files(&message);
            (message, InboundKind::Message { text, files })
        }
        Event::Message(message) if message.is_direct_message() => {
            let text = strip_mention(&message.text, bot_user);
            let files = shared_files(&message);
            (message, InboundKind::Message { text, files })
        }
        Event::Message(message) if quotes_token_only(&message, bot_user) => {
            let text = message.text.trim().to_owned();
            (message, InboundKind::Reply { text })
        }
        _ => return None,
    };
    if !message.is_user_post() {
        return None;
    }
    let direct = message.is_direct_message();
    let thread = message.thread_root_ts().to_owned();
    let channel = message.channel?;
    Some(Inbound {
        surface: Surface::Slack,
        tenant_key: team,
        delivery_id: event_id,
        user: InboundUser {
            id: message.user?,
            name: None,
        },
        message_ref: Some(message_ref(&channel, &message.ts)),
        chat_id: channel,
        thread_id: Some(thread),
        direct,
        reply: None,
        kind,
    })
}

/// A Slack message's id: its channel and its `ts`.
fn message_ref(channel: &str, ts: &str) -> String {
    format!("{channel}:{ts}")
}

/// The files of a message, each fetched later by its download link. A file Slack withholds
/// (an old file over a free workspace's limit) keeps an empty handle, so its download says why.
fn shared_files(message: &MessageEvent) -> Vec<InboundFile> {
    message
        .files
        .iter()
        .map(|file| {
            let withheld = file.mode.as_deref() == Some("hidden_by_limit");
            let url = file
                .url_private_download
                .as_deref()
                .or(file.url_private.as_deref())
                .filter(|_| !withheld)
                .unwrap_or_default();
            let name = file
                .name
                .clone()
                .or_else(|| file.title.clone())
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| format!("file {}", file.id));
            InboundFile {
                mime: file.mimetype.clone(),
                size: file.size,
                ..InboundFile::new(name, url)
            }
        })
        .collect()
}

/// A channel message that quotes a reply token without mentioning the bot.
fn quotes_token_only(message: &MessageEvent, bot_user: Option<&str>) -> bool {
    if !message.text.contains(TOKEN_OPEN) {
        return false;
    }
    match bot_user {
        Some(bot) => !message.text.contains(&format!("<@{bot}")),
        None => !message.text.trim_start().starts_with("<@"),
    }
}

/// The `Inbound`s of a `block_actions` payload: one per click on a workmate button.
pub fn click_inbounds(actions: &BlockActions) -> Vec<Inbound> {
    let Some(team) = actions.team_id() else {
        return Vec::new();
    };
    let Some(chat) = actions.channel_id() else {
        return Vec::new();
    };
    let thread = actions
        .message
        .as_ref()
        .and_then(|m| m.thread_ts.clone())
        .or_else(|| actions.message_ts().map(str::to_owned));
    let name = actions
        .user
        .name
        .clone()
        .or_else(|| actions.user.username.clone());
    actions
        .actions
        .iter()
        .enumerate()
        .filter_map(|(index, action)| {
            let action_value = action.value.as_deref()?;
            let Ok(button) = decode_button_value(action_value) else {
                tracing::warn!(action_id = %action.action_id, "A Slack button value that is not workmate's; ignored.");
                return None;
            };
            // The trigger id is unique per click; a payload with several actions gets one id
            // per action.
            let base = actions
                .trigger_id
                .clone()
                .or_else(|| action.action_ts.clone())?;
            let delivery_id = if index == 0 {
                base
            } else {
                format!("{base}#{index}")
            };
            Some(Inbound {
                surface: Surface::Slack,
                tenant_key: team.to_owned(),
                delivery_id,
                user: InboundUser {
                    id: actions.user.id.clone(),
                    name: name.clone(),
                },
                chat_id: chat.to_owned(),
                thread_id: thread.clone(),
                direct: chat.starts_with('D'),
                reply: None,
                message_ref: None,
                kind: InboundKind::Click { action: button },
            })
        })
        .collect()
}

/// The `Inbound` of a slash command. Slack says nothing of a thread here.
pub fn command_inbound(command: &SlashCommand) -> Inbound {
    Inbound {
        surface: Surface::Slack,
        tenant_key: command.team_id.clone(),
        delivery_id: command.trigger_id.clone(),
        user: InboundUser {
            id: command.user_id.clone(),
            name: command.user_name.clone(),
        },
        chat_id: command.channel_id.clone(),
        thread_id: None,
        direct: command.channel_name.as_deref() == Some("directmessage")
            || command.channel_id.starts_with('D'),
        reply: None,
        message_ref: None,
        kind: InboundKind::Command {
            text: command.text.clone(),
        },
    }
}

/// A slash command's reply as Slack takes it (the HTTP response, or the Socket Mode ack's
/// payload): ephemeral, with Block Kit when the reply has a card.
pub fn command_reply(reply: &CommandReply) -> Value {
    let mut answer = json!({"response_type": "ephemeral", "text": reply.text});
    if let (Some(card), Some(object)) = (&reply.card, answer.as_object_mut()) {
        object.insert("blocks".into(), crate::blocks::render(card));
    }
    answer
}

/// The text without the leading mention of the bot (of anyone, if the bot's id is unknown).
pub fn strip_mention(text: &str, bot_user: Option<&str>) -> String {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<@")
        && let Some((id, after)) = rest.split_once('>')
        && bot_user.is_none_or(|bot| id.split('|').next() == Some(bot))
    {
        return after.trim().to_owned();
    }
    trimmed.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::strip_mention;

    #[test]
    fn the_leading_bot_mention_is_removed() {
        assert_eq!(strip_mention("<@UBOT> say hi", Some("UBOT")), "say hi");
        assert_eq!(strip_mention("  <@UBOT|wm>  hi ", Some("UBOT")), "hi");
        assert_eq!(strip_mention("<@UX> hi", None), "hi");
        assert_eq!(strip_mention("<@UOTHER> hi", Some("UBOT")), "<@UOTHER> hi");
        assert_eq!(strip_mention("hi <@UBOT>", Some("UBOT")), "hi <@UBOT>");
    }
}
