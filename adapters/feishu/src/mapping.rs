//! Feishu's deliveries as the chat layer's neutral [`Inbound`]s.
//!
//! Invariants: only what a person wrote or clicked becomes an `Inbound` (bots' own messages and
//! content without text are dropped here); a p2p message or a group message that mentions the
//! bot is a `Message` with the bot's mention removed; a group message that does not mention it
//! (which arrives only with the group-message scope) is a `Reply`, which counts only when it
//! quotes a reply token; a click is a `Click` with the button's action; a bot-menu item is a
//! `Command`; a recalled message is a `Recall` naming its `message_id` (each message carries its
//! own as `message_ref`). The delivery id is what Feishu repeats on a redelivery: the event id.

use workmate_adapter::{Inbound, InboundKind, InboundUser, menu_command};
use workmate_protocol::Surface;

use crate::card::decode_action;
use crate::inbound::{CardAction, Event, MessageEvent, Meta, message_files, message_text};

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
                reply: None,
                message_ref: None,
                kind: InboundKind::Command {
                    text: menu_command(event_key),
                },
            })
        }
        Event::Recalled {
            message_id,
            chat_id,
        } => Some(Inbound {
            surface: Surface::Feishu,
            tenant_key: meta.tenant_key.as_deref()?.to_owned(),
            delivery_id: meta.event_id.to_string(),
            // Feishu does not say who recalled: only its own author can.
            user: InboundUser::default(),
            chat_id: chat_id.to_string(),
            thread_id: None,
            direct: false,
            reply: None,
            message_ref: None,
            kind: InboundKind::Recall {
                message_ref: message_id.to_string(),
            },
        }),
        Event::Other(_) => None,
    }
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
    let text = message_text(message, bot);
    let files = message_files(message);
    if text.is_none() && files.is_empty() {
        return None;
    }
    let text = text.unwrap_or_default();
    let direct = message.is_direct();
    let kind = if direct || mentions_bot {
        InboundKind::Message { text, files }
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
        reply: None,
        message_ref: Some(message.message_id.to_string()),
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
        reply: None,
        message_ref: None,
        kind: InboundKind::Click { action },
    })
}
