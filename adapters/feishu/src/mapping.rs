//! Feishu's deliveries as the chat layer's neutral [`Inbound`]s.
//!
//! Invariants: only what a person wrote or clicked becomes an `Inbound` (bots' own messages and
//! content without text are dropped here); a p2p message or a group message that mentions the
//! bot is a `Message` with the bot's mention removed; a group message that does not mention it
//! (which arrives only with the group-message scope) is a `Reply`, which counts only when it
//! quotes a reply token; a click is a `Click` with the button's action; a bot-menu item is a
//! `Command`. The delivery id is what Feishu repeats on a redelivery: the event id.

use workmate_adapter::{Inbound, InboundKind, InboundUser};
use workmate_protocol::Surface;

use crate::card::decode_action;
use crate::inbound::{CardAction, Event, MessageEvent, Meta, message_text};

/// The `Inbound` of a decoded event, if it is one workmate acts on. `bot` is the bot's
/// `open_id` when known; without it, any mention in a group is taken to address the bot.
pub fn event_inbound(meta: &Meta<'_>, event: &Event<'_>, bot: Option<&str>) -> Option<Inbound> {
    match event {
        Event::Message(message) => message_inbound(meta, message, bot),
        Event::CardAction(action) => click_inbound(meta, action),
        Event::BotMenu {
            operator,
            event_key,
        } => {
            let user = operator.best()?.to_owned();
            Some(Inbound {
                surface: Surface::Feishu,
                tenant_key: meta.tenant_key.as_deref()?.to_owned(),
                delivery_id: meta.event_id.to_string(),
                // A menu click has no chat: its reply goes to the person directly.
                chat_id: user.clone(),
                thread_id: None,
                direct: true,
                user: InboundUser {
                    id: user,
                    name: None,
                },
                kind: InboundKind::Command {
                    text: menu_command(event_key),
                },
            })
        }
        Event::Recalled { .. } | Event::Other(_) => None,
    }
}

/// The command a bot-menu key stands for: the key with `_` as spaces and an optional leading
/// `workmate` removed (`workmate_stop` and `stop` are `stop`; `automations_list` is
/// `automations list`).
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

fn message_inbound(
    meta: &Meta<'_>,
    event: &MessageEvent<'_>,
    bot: Option<&str>,
) -> Option<Inbound> {
    if event.sender.sender_type != "user" {
        return None;
    }
    let message = &event.message;
    let mentions_bot = match bot {
        Some(bot) => message
            .mentions
            .iter()
            .any(|m| m.id.open_id.as_deref() == Some(bot)),
        None => !message.mentions.is_empty(),
    };
    let text = message_text(message, bot)?;
    let direct = message.is_direct();
    let kind = if direct || mentions_bot {
        InboundKind::Message { text }
    } else {
        InboundKind::Reply { text }
    };
    let tenant_key = meta
        .tenant_key
        .as_deref()
        .or(event.sender.tenant_key.as_deref())?;
    Some(Inbound {
        surface: Surface::Feishu,
        tenant_key: tenant_key.to_owned(),
        delivery_id: meta.event_id.to_string(),
        user: InboundUser {
            id: event.sender.sender_id.best()?.to_owned(),
            name: None,
        },
        chat_id: message.chat_id.to_string(),
        thread_id: Some(message.thread_root().to_owned()),
        direct,
        kind,
    })
}

fn click_inbound(meta: &Meta<'_>, click: &CardAction<'_>) -> Option<Inbound> {
    let action = decode_action(&click.action.value)?;
    let tenant_key = meta
        .tenant_key
        .as_deref()
        .or(click.operator.tenant_key.as_deref())?;
    Some(Inbound {
        surface: Surface::Feishu,
        tenant_key: tenant_key.to_owned(),
        delivery_id: meta.event_id.to_string(),
        user: InboundUser {
            id: click.operator.ids.best()?.to_owned(),
            name: None,
        },
        chat_id: click
            .context
            .open_chat_id
            .as_deref()
            .unwrap_or_default()
            .to_owned(),
        thread_id: None,
        direct: false,
        kind: InboundKind::Click { action },
    })
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
    }
}
