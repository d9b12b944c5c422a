//! The session view: what a thread shows, folded from the session's events (see `fold.rs`).
//!
//! Invariants:
//! - One turn card per turn, updated in place: its status, one step per tool call (keyed by
//!   `tool_call_id`) and the answer streaming in.
//! - One approval or question card per parked prompt, keyed by its inbox item id. After
//!   resolution it keeps its content and records who decided, where and how, so every viewer
//!   (on any replica, after any restart) sees the same outcome.
//! - The view is a pure function of the state events applied in order: replaying them into a new
//!   view gives an equal view, and an event already applied (by `seq`) changes nothing.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use workmate_protocol::{
    Actor, ApprovalChoice, InboxItemId, Question, QuestionOption, Resolution, Surface, ToolCallId,
    ToolStatus, TurnId,
};

/// Everything a session's thread shows, rebuilt from its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionView {
    pub(crate) turns: Vec<TurnCard>,
    pub(crate) approvals: Vec<ApprovalCard>,
    pub(crate) questions: Vec<QuestionCard>,
    pub(crate) notices: Vec<String>,
    /// The seq of the latest state event applied; older or repeated ones are skipped.
    pub(crate) last_seq: u64,
    /// Permission prompts and questions announced but not parked yet, keyed by tool call.
    pub(crate) pending: Vec<PendingPrompt>,
    /// The turn whose answer was completed by an `assistant_message`: its next delta starts the
    /// next round-trip's text instead of appending to the previous one.
    pub(crate) sealed: Option<TurnId>,
}

impl SessionView {
    /// An empty view.
    pub fn new() -> Self {
        Self::default()
    }

    /// The turn cards, oldest first.
    pub fn turns(&self) -> &[TurnCard] {
        &self.turns
    }

    /// One turn's card.
    pub fn turn(&self, turn_id: &TurnId) -> Option<&TurnCard> {
        self.turns.iter().find(|t| &t.turn_id == turn_id)
    }

    /// The approval cards, in the order they were parked.
    pub fn approvals(&self) -> &[ApprovalCard] {
        &self.approvals
    }

    /// One approval card.
    pub fn approval(&self, item_id: &InboxItemId) -> Option<&ApprovalCard> {
        self.approvals.iter().find(|a| &a.item_id == item_id)
    }

    /// The question cards, in the order they were parked.
    pub fn questions(&self) -> &[QuestionCard] {
        &self.questions
    }

    /// One question card.
    pub fn question(&self, item_id: &InboxItemId) -> Option<&QuestionCard> {
        self.questions.iter().find(|q| &q.item_id == item_id)
    }

    /// Session-level notices outside any turn (model switched, mode changed), oldest first.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The seq of the latest state event applied (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }
}

/// Which card an event changed, so a surface re-renders only that one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", content = "id", rename_all = "snake_case")]
pub enum CardRef {
    /// A turn card.
    Turn(TurnId),
    /// An approval card.
    Approval(InboxItemId),
    /// A question card.
    Question(InboxItemId),
    /// A new session notice, by its index in [`SessionView::notices`].
    Notice(usize),
}

/// The live card of one turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnCard {
    /// The turn.
    pub turn_id: TurnId,
    /// Who sent the message that started it, when known.
    pub author: Option<Actor>,
    /// Where the turn stands.
    pub status: TurnStatus,
    /// One step per tool call, in proposal order.
    pub steps: Vec<Step>,
    /// The answer: the latest round-trip's text (streamed deltas, then its complete text).
    pub answer: String,
    /// Whether the model has shown reasoning in this turn.
    pub reasoning_hint: bool,
    /// Context lines: model fallback, compaction, mode or model changes, who stopped the turn.
    pub notes: Vec<String>,
}

/// Where a turn stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "detail", rename_all = "snake_case")]
pub enum TurnStatus {
    /// The model is working (or about to be called again).
    Thinking,
    /// A tool is executing.
    RunningTool(String),
    /// A tool call waits for a person's approval (also plan and folder requests).
    WaitingForApproval,
    /// A question waits for an answer.
    WaitingForAnswer,
    /// Finished normally.
    Done,
    /// Stopped by a person or the server.
    Stopped,
    /// Failed, with the friendly error message.
    Failed(String),
    /// Ended at the iteration cap.
    MaxIterations,
}

impl TurnStatus {
    /// Whether the turn has ended.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Self::Done | Self::Stopped | Self::Failed(_) | Self::MaxIterations
        )
    }
}

/// One tool call of a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The call.
    pub tool_call_id: ToolCallId,
    /// The tool.
    pub name: String,
    /// A one-line preview of the arguments (at most 120 characters).
    pub summary: String,
    /// Whether it started executing.
    pub started: bool,
    /// How it ended, once it has.
    pub outcome: Option<StepOutcome>,
}

/// How a tool call ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// The status.
    pub status: ToolStatus,
    /// The result preview when it ran, or why it did not run or failed.
    pub detail: String,
}

/// A parked permission prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalCard {
    /// The inbox item the buttons resolve.
    pub item_id: InboxItemId,
    /// The call waiting.
    pub tool_call_id: ToolCallId,
    /// The turn it blocks, if known.
    pub turn_id: Option<TurnId>,
    /// The tool.
    pub tool: String,
    /// The exact arguments of the call.
    pub arguments: Value,
    /// Why approval is needed.
    pub reason: String,
    /// The tool's category, or `""`.
    pub category: String,
    /// The answers offered, in display order.
    pub choices: Vec<ApprovalChoice>,
    /// Whose message led to the prompt (named when the turn's author is that person).
    pub requested_by: Option<Actor>,
    /// The target a standing rule would pin, if any.
    pub standing_target: Option<String>,
    /// Whether the command classifies as read-only.
    pub readonly_ok: bool,
    /// Pending or resolved.
    pub state: PromptState,
}

/// A parked question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionCard {
    /// The inbox item the buttons resolve.
    pub item_id: InboxItemId,
    /// The `ask_user` call waiting.
    pub tool_call_id: ToolCallId,
    /// The turn it blocks, if known.
    pub turn_id: Option<TurnId>,
    /// A short chip label, or `""`.
    pub header: String,
    /// The question.
    pub question: String,
    /// The selectable answers; may be empty.
    pub options: Vec<QuestionOption>,
    /// Whether a free-text answer is accepted.
    pub allow_text: bool,
    /// Whether several options may be chosen.
    pub multi: bool,
    /// The grouped form (empty for a single question).
    pub questions: Vec<Question>,
    /// Whose message led to the question.
    pub requested_by: Option<Actor>,
    /// Pending or resolved.
    pub state: PromptState,
}

/// Whether a parked prompt still waits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PromptState {
    /// Waiting for an answer; the card shows buttons.
    Pending,
    /// Answered (first answerer wins); the card shows who decided instead of buttons.
    Resolved {
        /// Who answered.
        by: Actor,
        /// Where the answer came from.
        via: Surface,
        /// The answer.
        resolution: Resolution,
    },
}

/// A prompt announced by `permission_required` or `question_requested`, waiting for its
/// `inbox_item_parked` to learn the item id.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PendingPrompt {
    pub(crate) tool_call_id: ToolCallId,
    pub(crate) turn_id: Option<TurnId>,
    pub(crate) body: PendingBody,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PendingBody {
    Permission {
        tool: String,
        arguments: Value,
        reason: String,
        category: String,
        standing_target: Option<String>,
        readonly_ok: bool,
        choices: Vec<ApprovalChoice>,
    },
    Question {
        header: String,
        question: String,
        options: Vec<QuestionOption>,
        allow_text: bool,
        multi: bool,
        questions: Vec<Question>,
    },
}
