//! One realistic, deterministic example per event kind and per command. They feed the generated
//! contract docs, the insta snapshots and the round-trip tests.
//!
//! The story: Alice asks the agent in a Slack thread which deploys failed; the agent wants to run
//! a shell command, Bob approves it from the thread, and so on.

use serde_json::json;
use workmate_protocol::{
    Actor, ApprovalChoice, Attachment, AttachmentKind, Command, Event, EventKind, InboxItemKind,
    PermissionMode, QuestionOption, Resolution, Surface, TokenUsage, ToolStatus, TurnEndStatus,
    Visibility,
};

const TENANT: &str = "t_acme";
const SESSION: &str = "s_0197a3c2e5f47b21";
const TURN: &str = "tn_0197a3c2e6a07c55";
/// 2026-01-05T09:30:00Z.
const START_MS: i64 = 1_767_605_400_000;
const CALL: &str = "call_7Hq2Lm9xR4";
const ITEM: &str = "ib_0197a3c2e7b14d08";

fn alice() -> Actor {
    Actor::named("u_alice", "Alice Chen")
}

fn bob() -> Actor {
    Actor::named("u_bob", "Bob Li")
}

fn command_arguments() -> serde_json::Value {
    json!({"command": "gh run list --status failure --created '>=2026-01-04' --limit 20"})
}

/// Wraps a kind in the envelope: `seq` as it would be in the story, inside the turn or not.
fn envelope(seq: u64, in_turn: bool, kind: EventKind) -> Event {
    Event {
        tenant_id: TENANT.into(),
        session_id: SESSION.into(),
        seq,
        turn_id: in_turn.then(|| TURN.into()),
        at_ms: START_MS + i64::try_from(seq).unwrap_or(0) * 750,
        kind,
    }
}

/// The example event of the kind named `name`, or `None` for an unknown name.
pub(crate) fn event(name: &str) -> Option<Event> {
    let event = match name {
        "session_created" => envelope(1, false, EventKind::SessionCreated {
            owner: "u_alice".into(),
            surface: Surface::Slack,
            title: Some("Failed deploys".into()),
            model: "openai:gpt-5-mini".into(),
            mode: PermissionMode::Interactive,
            unattended: false,
        }),
        "turn_start" => envelope(2, true, EventKind::TurnStart {
            input: "Which deploys failed since yesterday? Post a summary to #ops.".into(),
            author: Some(alice()),
            display: None,
        }),
        "reasoning_delta" => envelope(2, true, EventKind::ReasoningDelta {
            text: "The CI CLI can list failed runs; ".into(),
        }),
        "assistant_delta" => envelope(2, true, EventKind::AssistantDelta {
            text: "Let me check the ".into(),
        }),
        "assistant_message" => envelope(3, true, EventKind::AssistantMessage {
            text: Some("Let me check the CI runs.".into()),
            tool_calls: vec!["run_command".into()],
            reasoning: Some("The CI CLI can list failed runs; filter by date.".into()),
            usage: Some(TokenUsage {
                model: "openai:gpt-5-mini".into(),
                input: 4210,
                output: 96,
                cache_read: 3584,
                cache_write: 0,
            }),
        }),
        "tool_proposed" => envelope(4, true, EventKind::ToolProposed {
            tool_call_id: CALL.into(),
            name: "run_command".into(),
            arguments: command_arguments(),
        }),
        "permission_required" => envelope(5, true, EventKind::PermissionRequired {
            tool_call_id: CALL.into(),
            name: "run_command".into(),
            arguments: command_arguments(),
            reason: "run_command executes programs; interactive mode asks first".into(),
            category: String::new(),
            standing_target: None,
            readonly_ok: true,
            choices: vec![
                ApprovalChoice::Once,
                ApprovalChoice::AlwaysCommand,
                ApprovalChoice::ReadonlySession,
                ApprovalChoice::Deny,
            ],
            approvals_required: None,
        }),
        "inbox_item_parked" => envelope(6, true, EventKind::InboxItemParked {
            item_id: ITEM.into(),
            item_kind: InboxItemKind::Approval,
            tool_call_id: Some(CALL.into()),
            title: "Run `run_command`?".into(),
            visibility: Visibility::Inline,
            requested_by: Some("u_alice".into()),
        }),
        "inbox_item_resolved" => envelope(7, true, EventKind::InboxItemResolved {
            item_id: ITEM.into(),
            item_kind: InboxItemKind::Approval,
            tool_call_id: Some(CALL.into()),
            resolution: Resolution::Approval {
                choice: ApprovalChoice::Once,
            },
            resolved_by: bob(),
            via: Surface::Slack,
        }),
        "approval_counted" => envelope(7, true, EventKind::ApprovalCounted {
            item_id: ITEM.into(),
            approved_by: bob(),
            choice: ApprovalChoice::Once,
            via: Surface::Slack,
            approvals: 1,
            required: 2,
        }),
        "tool_started" => envelope(8, true, EventKind::ToolStarted {
            tool_call_id: CALL.into(),
            name: "run_command".into(),
        }),
        "tool_finished" => envelope(9, true, EventKind::ToolFinished {
            tool_call_id: CALL.into(),
            name: "run_command".into(),
            status: ToolStatus::Ok,
            result_preview: Some(
                "STATUS  TITLE  WORKFLOW  BRANCH\\nX  api deploy #4812  deploy  main\\nX  web deploy #977  deploy  main".into(),
            ),
            reason: None,
            display: None,
            standing_rule: None,
        }),
        "iteration_end" => envelope(10, true, EventKind::IterationEnd { iteration: 1 }),
        "directory_requested" => envelope(12, true, EventKind::DirectoryRequested {
            tool_call_id: "call_Dr3kP0a1Zq".into(),
            reason: "Read the deploy scripts to see why api #4812 timed out".into(),
            path: "/srv/deploy".into(),
            writable: false,
            primary: false,
        }),
        "question_requested" => envelope(14, true, EventKind::QuestionRequested {
            tool_call_id: "call_Qs8vB2nT6e".into(),
            question: "Where should the summary go?".into(),
            options: vec![
                QuestionOption {
                    label: "#ops".into(),
                    description: Some("The channel you named".into()),
                    recommended: true,
                    preview: None,
                },
                QuestionOption {
                    label: "#deploys".into(),
                    description: None,
                    recommended: false,
                    preview: None,
                },
            ],
            allow_text: true,
            multi: false,
            header: "Channel".into(),
            questions: Vec::new(),
        }),
        "plan_proposed" => envelope(16, true, EventKind::PlanProposed {
            tool_call_id: "call_Pl4nW7yU3c".into(),
            plan: "1. Raise the api deploy timeout from 10 to 20 minutes.\n2. Fix the lint error in web/src/nav.ts.\n3. Re-run both deploys.".into(),
        }),
        "compacting" => envelope(18, true, EventKind::Compacting),
        "compacted" => envelope(19, true, EventKind::Compacted {
            text: "Context compacted — earlier turns were summarized".into(),
        }),
        "memory_saved" => envelope(20, true, EventKind::MemorySaved {
            memory_id: "0193a5f2-7c1e-7d4b-9f6a-3b2c1d0e9f8a".into(),
            text: "Saved to memory: deploys to production happen on Tuesdays only".into(),
        }),
        "turn_end" => envelope(21, true, EventKind::TurnEnd {
            status: TurnEndStatus::Completed,
            iterations: 2,
        }),
        "error" => envelope(24, true, EventKind::Error {
            error: "The model gateway is rate-limiting this workspace; try again in a minute.".into(),
            error_type: "rate_limited".into(),
            raw: Some("429 Too Many Requests: tenant token budget exceeded".into()),
        }),
        "interrupted" => envelope(27, true, EventKind::Interrupted {
            iterations: 1,
            by: Some(alice()),
        }),
        "model_switched" => envelope(28, false, EventKind::ModelSwitched {
            from: Some("openai:gpt-5-mini".into()),
            to: "anthropic:claude-sonnet-4-5".into(),
            text: "Switched to anthropic:claude-sonnet-4-5".into(),
        }),
        "persona_switched" => envelope(30, false, EventKind::PersonaSwitched {
            from: "cowork".into(),
            to: "release-manager".into(),
            model: Some("anthropic:claude-sonnet-4-5".into()),
            text: "Persona switched to Release manager (release-manager), answering with anthropic:claude-sonnet-4-5".into(),
        }),
        "model_fallback" => envelope(12, true, EventKind::ModelFallback {
            from: "openai:gpt-5-mini".into(),
            to: "anthropic:claude-sonnet-4-5".into(),
            reason: "openai:gpt-5-mini: HTTP 503: upstream overloaded".into(),
        }),
        "mode_changed" => envelope(29, false, EventKind::ModeChanged {
            from: PermissionMode::Interactive,
            to: PermissionMode::Plan,
            by: alice(),
        }),
        _ => return None,
    };
    Some(event)
}

/// The example command of the type named `name`, or `None` for an unknown name.
pub(crate) fn command(name: &str) -> Option<Command> {
    let command = match name {
        "user_message" => Command::UserMessage {
            author: alice(),
            text: "Here is the failing log.".into(),
            attachments: vec![Attachment {
                kind: AttachmentKind::Text,
                name: "deploy-4812.log".into(),
                mime: "text/plain".into(),
                data: "12:04:11 waiting for rollout…\n12:14:11 timed out after 600s".into(),
            }],
        },
        "resolve_inbox" => Command::ResolveInbox {
            item_id: ITEM.into(),
            resolution: Resolution::Approval {
                choice: ApprovalChoice::Once,
            },
            actor: bob(),
            via: Surface::Slack,
        },
        "interrupt" => Command::Interrupt { actor: alice() },
        "set_mode" => Command::SetMode {
            mode: PermissionMode::Plan,
            actor: alice(),
        },
        "switch_model" => Command::SwitchModel {
            model: "anthropic:claude-sonnet-4-5".into(),
            actor: alice(),
        },
        "set_persona" => Command::SetPersona {
            persona: "release-manager".into(),
            actor: alice(),
        },
        "retry" => Command::Retry { actor: alice() },
        "compact" => Command::Compact { actor: alice() },
        _ => return None,
    };
    Some(command)
}
