//! What one turn step writes, and what the store reports back about it.

use workmate_protocol::{
    Event, EventKind, Message, PermissionMode, SessionId, TenantId, ToolCall, ToolCallId, TurnId,
};

use crate::repo::audit::NewAuditRecord;
use crate::repo::intake::IntakeKey;
use crate::repo::tool_calls::ToolCallState;
use crate::repo::usage::NewUsage;

/// A session's counters: the newest state event's `seq` and how many history messages it has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// The newest stored state event's `seq` (0 before the first).
    pub last_seq: u64,
    /// History messages stored (the newest one's index; indexes start at 1).
    pub message_count: u64,
}

impl Counters {
    /// The counters after `events` more events and `messages` more messages.
    pub fn advanced(self, events: usize, messages: usize) -> Self {
        Self {
            last_seq: self.last_seq + events as u64,
            message_count: self.message_count + messages as u64,
        }
    }
}

/// One move of a call through the ledger, owned so it can wait in the writer's queue.
#[derive(Clone, Debug)]
pub struct LedgerMove {
    /// The call.
    pub call: ToolCallId,
    /// Where it moves.
    pub to: ToolCallState,
    /// The outcome to keep with it.
    pub result: Option<serde_json::Value>,
}

/// Everything one step of a session writes: it becomes durable whole or not at all.
///
/// The session's runtime numbers the step before it is queued: `base` is the session's counters
/// before it, its messages take the next indexes and its events carry the next `seq`s. The writer
/// stores the step only if the session's stored counters still equal `base`, so a writer that
/// lost track of the session (another process wrote to it) is refused instead of forking it.
#[derive(Clone, Debug, Default)]
pub struct StepWrite {
    /// The tenant.
    pub tenant: TenantId,
    /// The session.
    pub session: SessionId,
    /// The turn the step belongs to, if any.
    pub turn: Option<TurnId>,
    /// Which writer of the session queued the step (a session runtime's id). Once a step of a
    /// lineage fails, the writer refuses every later step of that lineage for the session,
    /// whatever its counters say: those steps built on the one that failed.
    pub lineage: u64,
    /// The session's lease token the step was queued under; stored only while it is current.
    pub lease: u64,
    /// The session's counters before this step.
    pub base: Counters,
    /// History messages, in order; they take indexes `base.message_count + 1 ..`.
    pub messages: Vec<Message>,
    /// State events, numbered `base.last_seq + 1 ..` in order.
    pub events: Vec<Event>,
    /// Calls the model proposed, recorded in the ledger (a call already there keeps its row).
    pub proposed: Vec<ToolCall>,
    /// Ledger moves, applied in order after `proposed`.
    pub moves: Vec<LedgerMove>,
    /// Inbound deliveries this step's messages came from, marked done.
    pub done: Vec<IntakeKey>,
    /// Audit records.
    pub audit: Vec<NewAuditRecord>,
    /// Token usage of a model call.
    pub usage: Vec<NewUsage>,
    /// Changes to the session row, stored with the event that announces them.
    pub change: SessionChange,
}

/// Changes to a session's settings that a step stores.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionChange {
    /// A new permission mode.
    pub mode: Option<PermissionMode>,
    /// A new model.
    pub model: Option<String>,
    /// A new persona.
    pub persona: Option<String>,
    /// What people granted for the rest of the session, replacing what was there.
    pub grants: Option<serde_json::Value>,
    /// Whether nobody watches the session (its prompts wait in the inbox).
    pub unattended: Option<bool>,
    /// A new compaction view, replacing the one there was.
    pub compaction: Option<workmate_protocol::CompactionView>,
}

impl SessionChange {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl StepWrite {
    /// A step of `session` with nothing in it yet.
    pub fn new(tenant: TenantId, session: SessionId, turn: Option<TurnId>) -> Self {
        Self {
            tenant,
            session,
            turn,
            ..Self::default()
        }
    }

    /// The session's counters once this step is stored.
    pub fn end(&self) -> Counters {
        self.base.advanced(self.events.len(), self.messages.len())
    }

    /// The session's open turn once this step is stored, when the step starts one (`Some(Some)`)
    /// or ends one (`Some(None)`); `None` when it does neither.
    pub(crate) fn open_turn_after(&self) -> Option<Option<&str>> {
        self.events
            .iter()
            .rev()
            .find_map(|event| match &event.kind {
                EventKind::TurnStart { .. } => Some(
                    event
                        .turn_id
                        .as_ref()
                        .or(self.turn.as_ref())
                        .map(TurnId::as_str),
                ),
                kind if kind.is_terminal() => Some(None),
                _ => None,
            })
    }

    /// Whether the step adds to the session's history or event log (and so moves its counters).
    pub(crate) fn moves_counters(&self) -> bool {
        !self.events.is_empty() || !self.messages.is_empty()
    }

    /// Whether the step writes nothing at all.
    pub fn is_empty(&self) -> bool {
        !self.moves_counters()
            && self.proposed.is_empty()
            && self.moves.is_empty()
            && self.done.is_empty()
            && self.audit.is_empty()
            && self.usage.is_empty()
            && self.change.is_empty()
    }
}

/// What the store reports about a stored step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepWritten {
    /// For each of the step's ledger moves, in order, whether the call moved (`false`: it was
    /// not in a state that may move there, e.g. another writer moved it first).
    pub moved: Vec<bool>,
}

/// Why a step was not stored. Cloneable, unlike the store's error: one failed batch answers
/// every step in it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The session's stored counters are not the step's `base`: another writer wrote to the
    /// session, or an earlier step of this one failed. The session must be reloaded.
    #[error(
        "session {session} was written by another writer (expected it at seq {expected}); reload it"
    )]
    Fenced {
        /// The session.
        session: SessionId,
        /// The `seq` the step expected to follow.
        expected: u64,
    },
    /// The database failed the step.
    #[error("the step could not be stored: {0}")]
    Failed(String),
    /// The writer has stopped (the process is shutting down).
    #[error("the store's writer has stopped")]
    Stopped,
}
