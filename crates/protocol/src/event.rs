//! The event envelope and the classification of event kinds.
//!
//! Invariants every producer keeps and every consumer may rely on:
//! - State events of a session are numbered 1, 2, 3, … with no gaps; replaying them in `seq` order
//!   rebuilds every view. Transport events (deltas) are never persisted and reuse the `seq` of the
//!   latest state event before them, so a consumer that reconnects after seq N drops them safely.
//! - A turn starts with exactly one `turn_start` and ends with exactly one terminal event:
//!   `turn_end`, `error` or `interrupted`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event_kind::EventKind;
use crate::ids::{SessionId, TenantId, TurnId};

/// One thing that happened in a session, as every surface receives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// The tenant that owns the session.
    pub tenant_id: TenantId,
    /// The session.
    pub session_id: SessionId,
    /// State events carry their per-session sequence number (1-based, gapless); transport events
    /// (deltas) are never persisted and carry the seq of the latest state event before them.
    pub seq: u64,
    /// The turn the event belongs to; absent for session-level events outside a turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    /// When it happened, in Unix milliseconds.
    pub at_ms: i64,
    /// What happened.
    pub kind: EventKind,
}

impl Event {
    /// Whether the event is persisted and numbered (see [`EventKind::is_state`]).
    pub fn is_state(&self) -> bool {
        self.kind.is_state()
    }
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolStatus {
    /// It ran and succeeded.
    Ok,
    /// It ran and failed, or could not run (unknown tool, unparseable arguments).
    Error,
    /// Permission was refused (by a rule or a person).
    Denied,
    /// A stop or a crash cut it short; its outcome may be unknown.
    Interrupted,
}

/// How a turn ended normally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnEndStatus {
    /// The model answered without further tool calls.
    Completed,
    /// The iteration cap was reached.
    MaxIterationsExceeded,
}

impl EventKind {
    /// Every wire tag, in declaration order.
    pub const NAMES: &'static [&'static str] = &[
        "turn_start",
        "assistant_delta",
        "reasoning_delta",
        "assistant_message",
        "tool_proposed",
        "permission_required",
        "directory_requested",
        "question_requested",
        "plan_proposed",
        "tool_started",
        "tool_finished",
        "iteration_end",
        "turn_end",
        "error",
        "interrupted",
        "compacting",
        "compacted",
        "memory_saved",
        "inbox_item_parked",
        "inbox_item_resolved",
        "approval_counted",
        "model_switched",
        "persona_switched",
        "model_fallback",
        "mode_changed",
        "session_created",
    ];

    /// The wire tag, e.g. `"turn_start"`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::TurnStart { .. } => "turn_start",
            Self::AssistantDelta { .. } => "assistant_delta",
            Self::ReasoningDelta { .. } => "reasoning_delta",
            Self::AssistantMessage { .. } => "assistant_message",
            Self::ToolProposed { .. } => "tool_proposed",
            Self::PermissionRequired { .. } => "permission_required",
            Self::DirectoryRequested { .. } => "directory_requested",
            Self::QuestionRequested { .. } => "question_requested",
            Self::PlanProposed { .. } => "plan_proposed",
            Self::ToolStarted { .. } => "tool_started",
            Self::ToolFinished { .. } => "tool_finished",
            Self::IterationEnd { .. } => "iteration_end",
            Self::TurnEnd { .. } => "turn_end",
            Self::Error { .. } => "error",
            Self::Interrupted { .. } => "interrupted",
            Self::Compacting => "compacting",
            Self::Compacted { .. } => "compacted",
            Self::MemorySaved { .. } => "memory_saved",
            Self::InboxItemParked { .. } => "inbox_item_parked",
            Self::InboxItemResolved { .. } => "inbox_item_resolved",
            Self::ApprovalCounted { .. } => "approval_counted",
            Self::ModelSwitched { .. } => "model_switched",
            Self::PersonaSwitched { .. } => "persona_switched",
            Self::ModelFallback { .. } => "model_fallback",
            Self::ModeChanged { .. } => "mode_changed",
            Self::SessionCreated { .. } => "session_created",
        }
    }

    /// Whether this is a state event (persisted, numbered, replayed). Only the streaming deltas are
    /// transport events.
    pub fn is_state(&self) -> bool {
        !matches!(
            self,
            Self::AssistantDelta { .. } | Self::ReasoningDelta { .. }
        )
    }

    /// Whether this event ends a turn (`turn_end`, `error` or `interrupted`).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Self::TurnEnd { .. } | Self::Error { .. } | Self::Interrupted { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta() -> EventKind {
        EventKind::AssistantDelta { text: "Hi".into() }
    }

    #[test]
    fn only_deltas_are_transport() {
        assert!(!delta().is_state());
        assert!(!EventKind::ReasoningDelta { text: "…".into() }.is_state());
        assert!(EventKind::Compacting.is_state());
        assert!(
            EventKind::TurnEnd {
                status: TurnEndStatus::Completed,
                iterations: 1
            }
            .is_state()
        );
        let event = Event {
            tenant_id: "t".into(),
            session_id: "s".into(),
            seq: 3,
            turn_id: None,
            at_ms: 0,
            kind: delta(),
        };
        assert!(!event.is_state());
    }

    #[test]
    fn terminal_kinds() {
        assert!(
            EventKind::Interrupted {
                iterations: 0,
                by: None
            }
            .is_terminal()
        );
        assert!(!delta().is_terminal());
        assert!(!EventKind::Compacting.is_terminal());
    }

    #[test]
    fn names_are_unique_and_match_the_tag() {
        let mut names = EventKind::NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EventKind::NAMES.len());
        let json = serde_json::to_value(EventKind::Compacting).unwrap();
        assert_eq!(json, serde_json::json!({"type": "compacting"}));
        assert_eq!(
            serde_json::to_value(delta()).unwrap()["type"],
            delta().name()
        );
    }

    #[test]
    fn envelope_omits_absent_turn() {
        let event = Event {
            tenant_id: "t_acme".into(),
            session_id: "s_1".into(),
            seq: 7,
            turn_id: None,
            at_ms: 1,
            kind: EventKind::Compacting,
        };
        let json = serde_json::to_value(&event).unwrap();
        assert!(json.get("turn_id").is_none());
        assert_eq!(json["kind"]["type"], "compacting");
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn unknown_type_is_rejected() {
        let err = serde_json::from_str::<EventKind>(r#"{"type":"turn_begin","input":"x"}"#);
        assert!(err.is_err());
        let missing = serde_json::from_str::<EventKind>(r#"{"input":"x"}"#);
        assert!(missing.is_err());
    }
}
