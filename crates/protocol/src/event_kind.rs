//! The payload of an event: one variant per kind, tagged by `type`.
//!
//! Every event about a tool call carries its `tool_call_id`, so a surface can key one card (or one
//! card row) per call and update it in place as the call moves from proposed to finished.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Surface;
use crate::common::{Actor, ApprovalChoice, PermissionMode, TokenUsage};
use crate::event::{ToolStatus, TurnEndStatus};
use crate::ids::{InboxItemId, ToolCallId, UserId};
use crate::inbox::{InboxItemKind, Question, QuestionOption, Resolution, Visibility};

/// What happened. The `type` tag names the kind; the other fields are its payload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A turn began. Every turn starts with exactly one.
    TurnStart {
        /// The user's text; `""` for a retry, `"(resumed)"` for a durable resume.
        input: String,
        /// Who sent the message; absent for retries, resumes and scheduled runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        author: Option<Actor>,
        /// A line to show instead of `input` (for example when a skill is forced to run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// A piece of the assistant's answer as it streams (transport only, never persisted).
    AssistantDelta {
        /// The text to append.
        text: String,
    },
    /// A piece of the model's reasoning as it streams (transport only, display-only).
    ReasoningDelta {
        /// The text to append.
        text: String,
    },
    /// One model round-trip finished; sent after its deltas.
    AssistantMessage {
        /// The complete answer text of this round-trip, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The names of the tools the model called, in order (details follow in `tool_proposed`).
        tool_calls: Vec<String>,
        /// The complete reasoning text, when the model exposes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// Tokens spent by this round-trip.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
    },
    /// The model asked for a tool call; sent before it is authorized.
    ToolProposed {
        /// The call.
        tool_call_id: ToolCallId,
        /// The tool name.
        name: String,
        /// The parsed arguments (`{"_raw": text}` when they were not a JSON object).
        arguments: Value,
    },
    /// A tool call needs a person's approval; the turn waits until the prompt is resolved.
    PermissionRequired {
        /// The call waiting.
        tool_call_id: ToolCallId,
        /// The tool name.
        name: String,
        /// The call's arguments.
        arguments: Value,
        /// Why approval is needed.
        reason: String,
        /// The tool's category (for example a connector name), or `""`.
        category: String,
        /// The target a standing rule could pin ("allow every time for this recipient"), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        standing_target: Option<String>,
        /// Whether the command classifies as read-only, so "allow read-only commands" may be offered.
        readonly_ok: bool,
        /// The answers to offer, in display order.
        choices: Vec<ApprovalChoice>,
        /// How many distinct approvers must allow the call (the tenant's approval quorum for
        /// its category and channel); absent when one is enough.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approvals_required: Option<u32>,
    },
    /// The agent asks for access to a folder.
    DirectoryRequested {
        /// The `request_directory` call waiting.
        tool_call_id: ToolCallId,
        /// Why access is wanted.
        reason: String,
        /// The suggested folder; `""` when the agent let the user pick.
        path: String,
        /// Whether write access is asked.
        writable: bool,
        /// Whether the folder would become the session's primary workspace.
        primary: bool,
    },
    /// The agent asks the user a question. The singular fields mirror the first entry of a
    /// grouped form.
    QuestionRequested {
        /// The `ask_user` call waiting.
        tool_call_id: ToolCallId,
        /// The question text.
        question: String,
        /// The selectable answers; may be empty.
        options: Vec<QuestionOption>,
        /// Whether a free-text answer is accepted.
        allow_text: bool,
        /// Whether several options may be chosen.
        multi: bool,
        /// A short chip label, or `""`.
        header: String,
        /// The grouped form (at most four questions); empty for a single question.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        questions: Vec<Question>,
    },
    /// In plan mode, the agent proposes a plan for approval.
    PlanProposed {
        /// The `propose_plan` call waiting.
        tool_call_id: ToolCallId,
        /// The plan, as markdown.
        plan: String,
    },
    /// An authorized tool call starts executing.
    ToolStarted {
        /// The call.
        tool_call_id: ToolCallId,
        /// The tool name.
        name: String,
    },
    /// A tool call ended. Every proposed call ends with exactly one.
    ToolFinished {
        /// The call.
        tool_call_id: ToolCallId,
        /// The tool name.
        name: String,
        /// How it ended.
        status: ToolStatus,
        /// The start of the result (at most 300 characters, newlines escaped), when it ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result_preview: Option<String>,
        /// Why it did not run or failed, when it did not succeed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The tool's display-only sidecar (`_display`), never shown to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<Value>,
        /// The standing rule that allowed the call without asking ("tool → target"), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        standing_rule: Option<String>,
    },
    /// A batch of tool calls finished and the model is called again.
    IterationEnd {
        /// 1-based iteration number; 0 after a durable resume.
        iteration: u32,
    },
    /// Terminal: the turn ended normally or hit the iteration cap.
    TurnEnd {
        /// How it ended.
        status: TurnEndStatus,
        /// Iterations run.
        iterations: u32,
    },
    /// Terminal: the turn failed (usually the model provider). Not followed by `turn_end`.
    Error {
        /// A friendly message, or the raw error when there is no translation.
        error: String,
        /// The error class, for example `"rate_limited"` or `"context_overflow"`.
        error_type: String,
        /// The raw error text, when `error` is a friendly translation of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<String>,
    },
    /// Terminal: the turn was stopped. Not followed by `turn_end`.
    Interrupted {
        /// Iterations run before the stop.
        iterations: u32,
        /// Who stopped it; absent when the server did (shutdown, lost lease).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<Actor>,
    },
    /// The conversation is about to be compacted (summarized) to fit the context window.
    Compacting,
    /// The conversation was compacted or trimmed.
    Compacted {
        /// The notice shown to the user.
        text: String,
    },
    /// A memory was saved, changed or deleted for the person asking: shown in the thread (with
    /// what was saved), never sent to a model.
    MemorySaved {
        /// The memory's id.
        memory_id: String,
        /// The notice shown to the user, e.g. `Saved to memory: the deploy window is Tuesday`.
        text: String,
    },
    /// A prompt was parked in the inbox (approval, question, directory, plan, …).
    InboxItemParked {
        /// The item.
        item_id: InboxItemId,
        /// What it asks for.
        item_kind: InboxItemKind,
        /// The tool call it blocks, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<ToolCallId>,
        /// A one-line title, for example "Run `write_file`?".
        title: String,
        /// Where it shows.
        visibility: Visibility,
        /// Whose message led to the prompt, so a tenant can forbid self-approval.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requested_by: Option<UserId>,
    },
    /// A parked prompt was resolved. Sent once: later answers lose and learn who won.
    InboxItemResolved {
        /// The item.
        item_id: InboxItemId,
        /// What it asked for.
        item_kind: InboxItemKind,
        /// The tool call it blocked, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<ToolCallId>,
        /// The answer.
        resolution: Resolution,
        /// Who answered.
        resolved_by: Actor,
        /// Where the answer came from.
        via: Surface,
    },
    /// One approval of a prompt that needs several was counted; the prompt stays parked until
    /// enough distinct approvers allowed it (then `inbox_item_resolved` follows).
    ApprovalCounted {
        /// The item.
        item_id: InboxItemId,
        /// Who approved.
        approved_by: Actor,
        /// What they chose.
        choice: ApprovalChoice,
        /// Where the approval came from.
        via: Surface,
        /// Distinct approvals so far.
        approvals: u32,
        /// Approvals needed.
        required: u32,
    },
    /// The session's model changed.
    ModelSwitched {
        /// The previous model id, if one was set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        /// The new model id (`provider:model`).
        to: String,
        /// The notice shown to the user.
        text: String,
    },
    /// The session's persona changed.
    PersonaSwitched {
        /// The previous persona id.
        from: String,
        /// The new persona id.
        to: String,
        /// The model the session switched to with it, when the persona names one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// The notice shown to the user.
        text: String,
    },
    /// This answer comes from another model than the session's: the session's model (or the
    /// previous fallback) was overloaded or failing, so the tenant's fallback list was followed.
    /// The session's model itself is unchanged.
    ModelFallback {
        /// The model that failed (`provider:model`).
        from: String,
        /// The model answering instead.
        to: String,
        /// Why the first one was left, e.g. "HTTP 503: overloaded".
        reason: String,
    },
    /// The session's permission mode changed.
    ModeChanged {
        /// The previous mode.
        from: PermissionMode,
        /// The new mode.
        to: PermissionMode,
        /// Who changed it (the plan approver, when approving a plan switched it).
        by: Actor,
    },
    /// A session was created; always its first event (seq 1).
    SessionCreated {
        /// Who started it.
        owner: UserId,
        /// Where it lives.
        surface: Surface,
        /// A title, when known at creation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The model id (`provider:model`).
        model: String,
        /// The initial permission mode.
        mode: PermissionMode,
        /// Whether prompts go to the cross-session inbox rather than only the thread.
        unattended: bool,
    },
}
