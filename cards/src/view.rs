//! The session view: what a thread shows, folded from the session's events (see `fold.rs`).
//!
//! Invariants:
//! - A thread reads in the order things happened. A turn shows as one or more segments (turn
//!   cards), each updated in place: its status, one step per tool call (keyed by `tool_call_id`)
//!   and the answer streaming in. Once the turn parks on an approval or a question, the next
//!   change to the turn opens a new segment, posted below the prompt's card; the earlier segment
//!   is marked `continued` and never changes again. The new segment starts from the turn's
//!   current status and the calls still unfinished; later steps, the answer and the final status
//!   go there. Only the newest segment of a running turn offers the Stop button. A segment
//!   closed by an answer to its prompt says how it was answered
//!   ([`TurnStatus::Continued`]) and marks the call answered as allowed or not, so no closed
//!   card keeps saying it waits.
//! - Segment 0 of a turn is [`CardRef::Turn`] (card key `turn:{turn_id}`, as before segments
//!   existed); segment `n ≥ 1` is [`CardRef::TurnPart`] (card key `turn:{turn_id}:{n}`).
//! - One approval or question card per parked prompt, keyed by its inbox item id. After
//!   resolution it keeps its content and records who decided, where and how, so every viewer
//!   (on any replica, after any restart) sees the same outcome.
//! - The view is a pure function of the state events applied in order: replaying them into a new
//!   view gives an equal view, and an event already applied (by `seq`) changes nothing.
//! - A view shows one session: the session id of the first event applied is kept, and events of
//!   any other session are ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use workmate_protocol::{
    Actor, ApprovalChoice, InboxItemId, Question, QuestionOption, Resolution, SessionId, Surface,
    ToolCallId, ToolStatus, TurnId,
};

/// Everything a session's thread shows, rebuilt from its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionView {
    /// The session shown, from the first event applied.
    pub(crate) session_id: Option<SessionId>,
    /// Every turn segment, in the order they were opened (the order they appear in the thread).
    pub(crate) turns: Vec<TurnCard>,
    pub(crate) approvals: Vec<ApprovalCard>,
    pub(crate) questions: Vec<QuestionCard>,
    pub(crate) plans: Vec<PlanCard>,
    pub(crate) notices: Vec<String>,
    /// The seq of the latest state event applied; older or repeated ones are skipped.
    pub(crate) last_seq: u64,
    /// Permission prompts and questions announced but not parked yet, keyed by tool call.
    pub(crate) pending: Vec<PendingPrompt>,
    /// The turn whose answer was completed by an `assistant_message`: its next delta starts the
    /// next round-trip's text instead of appending to the previous one.
    pub(crate) sealed: Option<TurnId>,
    /// Turns parked on a prompt since their newest segment opened: their next change opens a
    /// new segment below the prompt.
    pub(crate) split: Vec<TurnId>,
    /// Whether turn and question cards name the person they answer (a personal conversation
    /// in a group, where several people's cards share one chat).
    pub(crate) names_people: bool,
}

impl SessionView {
    /// An empty view.
    pub fn new() -> Self {
        Self::default()
    }

    /// The session shown, once an event was applied.
    pub fn session_id(&self) -> Option<&SessionId> {
        self.session_id.as_ref()
    }

    /// Every turn card (segment), in the order they were opened: the order of the thread.
    pub fn turns(&self) -> &[TurnCard] {
        &self.turns
    }

    /// One turn's newest segment: the one that shows where the turn stands now.
    pub fn turn(&self, turn_id: &TurnId) -> Option<&TurnCard> {
        self.turns.iter().rev().find(|t| &t.turn_id == turn_id)
    }

    /// One segment of a turn (0 is the first).
    pub fn turn_segment(&self, turn_id: &TurnId, segment: u32) -> Option<&TurnCard> {
        self.turns
            .iter()
            .find(|t| &t.turn_id == turn_id && t.segment == segment)
    }

    /// Every segment of a turn, first to newest.
    pub fn turn_segments<'a>(
        &'a self,
        turn_id: &TurnId,
    ) -> impl Iterator<Item = &'a TurnCard> + use<'a> {
        let turn_id = turn_id.clone();
        self.turns.iter().filter(move |t| t.turn_id == turn_id)
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

    /// The plan cards, in the order they were parked.
    pub fn plans(&self) -> &[PlanCard] {
        &self.plans
    }

    /// One plan card.
    pub fn plan(&self, item_id: &InboxItemId) -> Option<&PlanCard> {
        self.plans.iter().find(|p| &p.item_id == item_id)
    }

    /// Session-level notices outside any turn (model switched, mode changed), oldest first.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The seq of the latest state event applied (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Makes turn and question cards name the person they answer ("👤 Ana Lima"), for a
    /// conversation whose cards share a chat with other people's (see [`crate::cards_for`]).
    pub fn name_people(&mut self, yes: bool) {
        self.names_people = yes;
    }

    /// Whether turn and question cards name the person they answer.
    pub fn names_people(&self) -> bool {
        self.names_people
    }
}

/// Which card an event changed, so a surface re-renders only that one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", content = "id", rename_all = "snake_case")]
pub enum CardRef {
    /// A turn's first segment (card key `turn:{turn_id}`).
    Turn(TurnId),
    /// A later segment of a turn, by its index (≥ 1), opened after the turn parked on a prompt
    /// (card key `turn:{turn_id}:{index}`). Index 0 is never produced: that is [`CardRef::Turn`].
    TurnPart(TurnId, u32),
    /// An approval card.
    Approval(InboxItemId),
    /// A question card.
    Question(InboxItemId),
    /// A plan card (`propose_plan`).
    Plan(InboxItemId),
    /// A new session notice, by its index in [`SessionView::notices`].
    Notice(usize),
}

/// The live card of one turn segment (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnCard {
    /// The session the turn belongs to (the Stop button names it).
    pub session_id: SessionId,
    /// The turn.
    pub turn_id: TurnId,
    /// Which segment of the turn this is: 0 for the first, then 1, 2, … after each prompt.
    pub segment: u32,
    /// Whether a later segment carries on below; a continued segment never changes again.
    pub continued: bool,
    /// Who sent the message that started it, when known.
    pub author: Option<Actor>,
    /// Where the turn stands.
    pub status: TurnStatus,
    /// One step per tool call, in proposal order (a later segment starts with the calls still
    /// unfinished when it opened).
    pub steps: Vec<Step>,
    /// The answer: the latest round-trip's text (streamed deltas, then its complete text) since
    /// the segment opened.
    pub answer: String,
    /// Whether the model has shown reasoning in this turn.
    pub reasoning_hint: bool,
    /// Context lines: model fallback, compaction, mode or model changes, who stopped the turn.
    pub notes: Vec<String>,
}

impl TurnCard {
    /// The reference of this segment: [`CardRef::Turn`] for segment 0, else
    /// [`CardRef::TurnPart`].
    pub fn card_ref(&self) -> CardRef {
        match self.segment {
            0 => CardRef::Turn(self.turn_id.clone()),
            n => CardRef::TurnPart(self.turn_id.clone(), n),
        }
    }

    /// Whether the segment offers the Stop button: the turn runs and this is its newest segment.
    pub fn stoppable(&self) -> bool {
        !self.continued && !self.status.is_terminal()
    }
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
    /// The segment ended when its prompt was answered and the turn went on below; how it was
    /// answered ("✅ Approved by Ana Lima").
    Continued(String),
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
    /// In a segment its approval closed: whether the call was allowed (it runs below) or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<bool>,
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
    /// The approvals a call needing several has gathered, when it needs more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<Quorum>,
    /// Pending or resolved.
    pub state: PromptState,
}

/// The approvals of a prompt that needs several distinct approvers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quorum {
    /// How many are needed.
    pub required: u32,
    /// Who approved so far, in order.
    pub approved_by: Vec<Actor>,
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

/// A plan proposed in plan mode, waiting for approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanCard {
    /// The inbox item the buttons resolve.
    pub item_id: InboxItemId,
    /// The `propose_plan` call waiting.
    pub tool_call_id: ToolCallId,
    /// The turn it blocks, if known.
    pub turn_id: Option<TurnId>,
    /// The plan, as markdown.
    pub plan: String,
    /// Whose message led to the plan.
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
        approvals_required: Option<u32>,
    },
    Question {
        header: String,
        question: String,
        options: Vec<QuestionOption>,
        allow_text: bool,
        multi: bool,
        questions: Vec<Question>,
    },
    Plan {
        plan: String,
    },
}
