//! Typed decoding of what WeCom sends once a callback is verified and decrypted (or, for the
//! smart robot's long connection, as it arrives): the smart robot's JSON ([`robot`]) and the
//! self-built app's XML ([`app`]).
//!
//! Invariants: decoding trusts nothing it does not need and never panics; an event type
//! workmate does not act on decodes to an `Other` variant instead of failing, so WeCom still
//! gets its acknowledgement; card-click fields are read defensively (`task_id` or `TaskId`,
//! `event_key` or `EventKey`), because WeCom's documents and SDKs disagree on their casing. A
//! body that is not WeCom's shape at all is a [`DecodeError`] that says what was missing.

pub mod app;
mod lenient;
pub mod robot;

pub use app::{AppCallback, AppEvent, AppEventKind, AppMeta, AppOther, AppText, decode_app};
pub use robot::{
    Chat, Media, MixedItem, Quote, RobotCallback, RobotContent, RobotEvent, RobotEventKind,
    RobotFeedback, RobotFrom, RobotMessage, StreamRefresh, decode_robot,
};

/// Why a decrypted body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a WeCom callback: {0}")]
pub struct DecodeError(pub String);

/// A click on a template card's button (or a vote / multiple-choice submit), as the smart
/// robot's `template_card_event` and the self-built app's `Event=template_card_event` carry it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CardEvent {
    /// `button_interaction`, `vote_interaction`, `multiple_interaction`, …
    pub card_type: String,
    /// The clicked button's `key`.
    pub event_key: String,
    /// The card's `task_id`, as it was sent.
    pub task_id: String,
    /// The self-built app's single-use `ResponseCode` for updating the card (72 h); the smart
    /// robot answers its click within 5 s instead and carries none.
    pub response_code: Option<String>,
    /// The choices made on the card (dropdowns, votes), in the order WeCom lists them.
    pub selected: Vec<Selection>,
}

/// One question's chosen options on an interactive card.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The question's key.
    pub question_key: String,
    /// The chosen options' ids.
    pub option_ids: Vec<String>,
}
