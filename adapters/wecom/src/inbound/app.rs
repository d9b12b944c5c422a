//! The self-built app's (自建应用) decrypted XML: text messages and events.
//!
//! The XML is flat (`<xml><ToUserName>…</ToUserName>…</xml>`), with text in CDATA sections or
//! escaped; only a card event's `SelectedItems` nests. It is read with quick-xml's serde support,
//! which joins CDATA and text and resolves entities and character references.
//!
//! Invariants: a callback has its `FromUserName` and `MsgType`, or it is an error; an event of
//! a type workmate does not act on is [`AppEventKind::Other`], another message type is
//! [`AppCallback::Other`]; unknown elements are skipped.

use serde::Deserialize;

use super::{CardEvent, DecodeError, Selection};

/// One decoded self-built-app callback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppCallback {
    /// A text message (`MsgType=text`).
    Text(AppText),
    /// An event (`MsgType=event`).
    Event(AppEvent),
    /// Another message type (image, voice, location, link, …): acknowledged, not acted on.
    Other(AppOther),
}

/// The fields every app callback carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppMeta {
    /// `ToUserName`: the corp id.
    pub to_user: String,
    /// `FromUserName`: the sender's userid.
    pub from_user: String,
    /// `CreateTime` (Unix seconds), as written: part of an event's delivery id.
    pub create_time: String,
    /// `AgentID`: the app.
    pub agent_id: Option<String>,
}

/// A text message to the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppText {
    /// Who sent it, when, to which app.
    pub meta: AppMeta,
    /// `MsgId`: what a redelivery repeats.
    pub msg_id: Option<String>,
    /// `Content`.
    pub content: String,
}

/// An event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppEvent {
    /// Who caused it, when, in which app.
    pub meta: AppMeta,
    /// What happened.
    pub kind: AppEventKind,
}

/// The app event types workmate tells apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppEventKind {
    /// `template_card_event`: a click on a template card the app sent.
    TemplateCard(CardEvent),
    /// `click`: a custom-menu item.
    Click {
        /// The item's `EventKey`.
        event_key: String,
    },
    /// `enter_agent`: someone opened the app.
    EnterAgent,
    /// Any other `Event` (`template_card_menu_event`, `view`, …).
    Other(String),
}

/// A message of a type workmate does not act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppOther {
    /// Who sent it, when, to which app.
    pub meta: AppMeta,
    /// `MsgType`.
    pub msg_type: String,
    /// `MsgId`, when given.
    pub msg_id: Option<String>,
    /// `MediaId` of an image, voice, video or file message: what `/cgi-bin/media/get` fetches.
    pub media_id: Option<String>,
}

/// The callback's elements; empty or absent ones are `None`.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct Raw {
    to_user_name: Option<String>,
    from_user_name: Option<String>,
    create_time: Option<String>,
    msg_type: Option<String>,
    content: Option<String>,
    msg_id: Option<String>,
    #[serde(rename = "AgentID")]
    agent_id: Option<String>,
    event: Option<String>,
    event_key: Option<String>,
    task_id: Option<String>,
    card_type: Option<String>,
    response_code: Option<String>,
    selected_items: Option<RawSelectedItems>,
    media_id: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct RawSelectedItems {
    selected_item: Vec<RawSelectedItem>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct RawSelectedItem {
    question_key: Option<String>,
    option_ids: Option<RawOptionIds>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct RawOptionIds {
    option_id: Vec<String>,
}

/// Decodes a self-built-app callback's decrypted XML.
pub fn decode_app(plaintext: &str) -> Result<AppCallback, DecodeError> {
    let raw: Raw = quick_xml::de::from_str(plaintext)
        .map_err(|e| DecodeError(format!("the app's callback is not its XML: {e}")))?;
    let present = |value: Option<String>| value.filter(|v| !v.trim().is_empty());
    let from_user = present(raw.from_user_name)
        .ok_or_else(|| DecodeError("an app callback without FromUserName".into()))?;
    let msg_type = present(raw.msg_type)
        .ok_or_else(|| DecodeError("an app callback without MsgType".into()))?;
    let meta = AppMeta {
        to_user: raw.to_user_name.unwrap_or_default(),
        from_user,
        create_time: raw.create_time.unwrap_or_default().trim().to_owned(),
        agent_id: present(raw.agent_id),
    };
    let msg_id = present(raw.msg_id);
    Ok(match msg_type.as_str() {
        "text" => AppCallback::Text(AppText {
            meta,
            msg_id,
            content: raw.content.unwrap_or_default(),
        }),
        "event" => {
            let event = raw.event.unwrap_or_default();
            let kind = match event.as_str() {
                "template_card_event" => AppEventKind::TemplateCard(CardEvent {
                    card_type: raw.card_type.unwrap_or_default(),
                    event_key: raw.event_key.unwrap_or_default(),
                    task_id: raw.task_id.unwrap_or_default(),
                    response_code: present(raw.response_code),
                    selected: raw.selected_items.map(selections).unwrap_or_default(),
                }),
                "click" => AppEventKind::Click {
                    event_key: raw.event_key.unwrap_or_default(),
                },
                "enter_agent" => AppEventKind::EnterAgent,
                _ => AppEventKind::Other(event),
            };
            AppCallback::Event(AppEvent { meta, kind })
        }
        _ => AppCallback::Other(AppOther {
            meta,
            msg_type,
            msg_id,
            media_id: present(raw.media_id),
        }),
    })
}

fn selections(items: RawSelectedItems) -> Vec<Selection> {
    items
        .selected_item
        .into_iter()
        .map(|item| Selection {
            question_key: item.question_key.unwrap_or_default(),
            option_ids: item.option_ids.map(|o| o.option_id).unwrap_or_default(),
        })
        .collect()
}
