//! The smart robot's events: `msgtype: "event"`, with `event.eventtype` and a sub-object named
//! after the type.
//!
//! Invariant: an event decodes whatever its contents; an unknown or missing type is
//! [`RobotEventKind::Other`], a missing field is empty.

use serde_json::Value;

use super::{Chat, RobotFrom};
use crate::inbound::CardEvent;
use crate::inbound::lenient::{self, field, text};

/// An event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotEvent {
    /// The event's id, when given: what a redelivery repeats.
    pub msgid: String,
    /// The robot.
    pub aibotid: String,
    /// Where it happened, when the event says.
    pub chat: Option<Chat>,
    /// Who caused it.
    pub from: RobotFrom,
    /// A URL that accepts one proactive reply, when given.
    pub response_url: Option<String>,
    /// When it happened (Unix seconds), when given.
    pub create_time: Option<i64>,
    /// What happened.
    pub kind: RobotEventKind,
}

/// The event types workmate tells apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RobotEventKind {
    /// `enter_chat`: someone opened the robot's DM (first time that day); a welcome may be
    /// answered within 5 s.
    EnterChat,
    /// `template_card_event`: a click on a template card; an update may be answered within 5 s.
    TemplateCard(CardEvent),
    /// `feedback_event`: a thumbs up or down on an answer.
    Feedback(RobotFeedback),
    /// `disconnected_event` (long connection): a newer connection replaced this one.
    Disconnected,
    /// Any other `eventtype`.
    Other(String),
}

/// A `feedback_event`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RobotFeedback {
    /// The feedback id the answer carried.
    pub id: String,
    /// `1` accurate, `2` inaccurate, `3` withdrawn, as given.
    pub kind: Option<i64>,
    /// What the person wrote, if anything.
    pub content: Option<String>,
}

/// The event's kind, from `event.eventtype` and the sub-object named after it.
pub(super) fn event_kind(event: &Value) -> RobotEventKind {
    let Some(eventtype) = text(event, &["eventtype", "EventType", "event_type"]) else {
        return RobotEventKind::Other(String::new());
    };
    let data = field(event, &[eventtype.as_str()]).unwrap_or(&Value::Null);
    match eventtype.as_str() {
        "enter_chat" => RobotEventKind::EnterChat,
        "disconnected_event" => RobotEventKind::Disconnected,
        "template_card_event" => RobotEventKind::TemplateCard(card_event(data, event)),
        "feedback_event" => RobotEventKind::Feedback(RobotFeedback {
            id: text(data, &["id"]).unwrap_or_default(),
            kind: field(data, &["type"]).and_then(|v| match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.parse().ok(),
                _ => None,
            }),
            content: text(data, &["content"]),
        }),
        _ => RobotEventKind::Other(eventtype),
    }
}

/// A click, from the `template_card_event` sub-object; a field it lacks is looked for on the
/// event itself (an older flat shape).
fn card_event(data: &Value, event: &Value) -> CardEvent {
    let read = |keys: &[&str]| text(data, keys).or_else(|| text(event, keys));
    CardEvent {
        card_type: read(&["card_type", "CardType"]).unwrap_or_default(),
        event_key: read(&["event_key", "EventKey"]).unwrap_or_default(),
        task_id: read(&["task_id", "TaskId"]).unwrap_or_default(),
        response_code: read(&["response_code", "ResponseCode"]),
        selected: field(data, &["selected_items", "SelectedItems"])
            .map(lenient::selections)
            .unwrap_or_default(),
    }
}
