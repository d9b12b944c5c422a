//! The story builder and the steps every story is made of.

use crate::{Card, SessionView};
use serde_json::{Value, json};
use workmate_protocol::{
    Actor, ApprovalChoice, Event, EventKind, InboxItemId, InboxItemKind, PermissionMode,
    QuestionOption, Resolution, Surface, ToolCallId, ToolStatus, TurnEndStatus, TurnId, Visibility,
};

/// What [`Story::fail_rate_limited`] says failed.
pub const RATE_LIMITED: &str =
    "The model gateway is rate-limiting this workspace; try again in a minute.";

pub fn alice() -> Actor {
    Actor::named("u_alice", "Alice Chen")
}

pub fn bob() -> Actor {
    Actor::named("u_bob", "Bob Li")
}

/// A session's events: state events get seq 1, 2, 3, …; deltas reuse the latest seq.
#[derive(Debug)]
pub struct Story {
    seq: u64,
    turn: Option<TurnId>,
    pub events: Vec<Event>,
}

impl Story {
    /// A story that starts with `session_created`.
    pub fn new() -> Self {
        let mut story = Self {
            seq: 0,
            turn: None,
            events: Vec::new(),
        };
        story.state(EventKind::SessionCreated {
            owner: "u_alice".into(),
            surface: Surface::Slack,
            title: Some("Failed deploys".into()),
            model: "openai:gpt-5-mini".into(),
            mode: PermissionMode::Interactive,
            unattended: false,
        });
        story
    }

    fn push(&mut self, kind: EventKind) -> Event {
        let event = Event {
            tenant_id: "t_acme".into(),
            session_id: "s_1".into(),
            seq: self.seq,
            turn_id: self.turn.clone(),
            at_ms: 1_767_605_400_000 + i64::try_from(self.events.len()).unwrap() * 750,
            kind,
        };
        self.events.push(event.clone());
        event
    }

    /// A state event of the current turn (or of the session, between turns).
    pub fn state(&mut self, kind: EventKind) -> Event {
        self.seq += 1;
        self.push(kind)
    }

    /// A transport event (delta).
    pub fn delta(&mut self, text: &str) -> Event {
        self.push(EventKind::AssistantDelta { text: text.into() })
    }

    pub fn reasoning(&mut self, text: &str) -> Event {
        self.push(EventKind::ReasoningDelta { text: text.into() })
    }

    pub fn start_turn(&mut self, id: &str, input: &str) -> Event {
        self.turn = Some(id.into());
        self.state(EventKind::TurnStart {
            input: input.into(),
            author: Some(alice()),
            display: None,
        })
    }

    /// Leaves the current turn: later events are session-level.
    pub fn between_turns(&mut self) {
        self.turn = None;
    }

    pub fn message(&mut self, text: Option<&str>, tools: &[&str]) -> Event {
        self.state(EventKind::AssistantMessage {
            text: text.map(Into::into),
            tool_calls: tools.iter().map(|t| (*t).to_owned()).collect(),
            reasoning: None,
            usage: None,
        })
    }

    pub fn propose(&mut self, call: &str, name: &str, arguments: Value) -> Event {
        self.state(EventKind::ToolProposed {
            tool_call_id: call.into(),
            name: name.into(),
            arguments,
        })
    }

    /// `permission_required` followed by `inbox_item_parked` for the same call.
    pub fn ask_permission(
        &mut self,
        call: &str,
        item: &str,
        name: &str,
        arguments: Value,
        choices: &[ApprovalChoice],
    ) -> Event {
        self.state(EventKind::PermissionRequired {
            tool_call_id: call.into(),
            name: name.into(),
            arguments,
            reason: format!("{name} changes things; interactive mode asks first"),
            category: match name {
                "run_shell" => "shell",
                "write_file" | "replace_in_file" | "apply_patch" => "files",
                _ => "",
            }
            .into(),
            standing_target: None,
            readonly_ok: name == "run_shell",
            choices: choices.to_vec(),
            approvals_required: None,
        });
        self.park(call, item, InboxItemKind::Approval, name)
    }

    /// `run_shell` listing yesterday's failed CI runs, waiting for approval with every choice a
    /// command offers.
    pub fn ask_to_list_failed_runs(&mut self, call: &str, item: &str) -> Event {
        let command = json!({
            "command": "gh run list --status failure --created '>=2026-01-04' --limit 20",
            "description": "List the failed CI runs since yesterday"
        });
        self.propose(call, "run_shell", command.clone());
        let choices = [
            ApprovalChoice::Once,
            ApprovalChoice::AlwaysCommand,
            ApprovalChoice::ReadonlySession,
            ApprovalChoice::Deny,
        ];
        self.ask_permission(call, item, "run_shell", command, &choices)
    }

    /// Bob approves `item` once.
    pub fn approve_once_as_bob(&mut self, call: &str, item: &str) -> Event {
        let once = Resolution::Approval {
            choice: ApprovalChoice::Once,
        };
        self.resolve(call, item, InboxItemKind::Approval, once, bob())
    }

    /// The running listing finds two failed deploys; the round trip ends and the gateway falls
    /// back to another model for the next one.
    pub fn find_two_failed_runs_then_fall_back(&mut self, call: &str) -> Event {
        let output = "X  api deploy #4812  deploy  main\\nX  web deploy #977  deploy  main";
        self.finish(call, "run_shell", ToolStatus::Ok, Some(output), None);
        self.state(EventKind::IterationEnd { iteration: 1 });
        self.state(EventKind::ModelFallback {
            from: "openai:gpt-5-mini".into(),
            to: "anthropic:claude-sonnet-4-5".into(),
            reason: "HTTP 503: upstream overloaded".into(),
        })
    }

    /// `write_file` of 25-line release notes, waiting for approval (once, always, deny).
    pub fn ask_to_write_release_notes(&mut self, call: &str, item: &str) -> Event {
        let args = json!({
            "path": "docs/RELEASE.md",
            "content": (1..=25).map(|i| format!("- change {i}")).collect::<Vec<_>>().join("\n"),
        });
        self.propose(call, "write_file", args.clone());
        let choices = [
            ApprovalChoice::Once,
            ApprovalChoice::AlwaysTool,
            ApprovalChoice::Deny,
        ];
        self.ask_permission(call, item, "write_file", args, &choices)
    }

    /// `apply_patch` changing 45 lines of `web/src/nav.ts` (more than an approval card shows),
    /// waiting for approval (once, deny).
    pub fn ask_to_apply_a_long_patch(&mut self, call: &str, item: &str) -> Event {
        let patch = format!(
            "*** Begin Patch\n*** Update File: web/src/nav.ts\n@@ export function nav\n{}*** End Patch",
            (1..=45)
                .map(|i| format!("-old {i}\n+new {i}\n"))
                .collect::<String>()
        );
        let args = json!({ "patch": patch });
        self.propose(call, "apply_patch", args.clone());
        let choices = [ApprovalChoice::Once, ApprovalChoice::Deny];
        self.ask_permission(call, item, "apply_patch", args, &choices)
    }

    /// `post_message`, a tool with no preview of its own, with 2,500 characters of text (more
    /// than an approval card shows of raw arguments), waiting for approval (once, always for this
    /// automation, deny).
    pub fn ask_to_post_a_long_message(&mut self, call: &str, item: &str) -> Event {
        let args = json!({ "channel": "#ops", "text": "x".repeat(2_500) });
        self.propose(call, "post_message", args.clone());
        let choices = [
            ApprovalChoice::Once,
            ApprovalChoice::AlwaysTask,
            ApprovalChoice::Deny,
        ];
        self.ask_permission(call, item, "post_message", args, &choices)
    }

    /// `replace_in_file` raising the api deploy timeout, waiting for approval (once, deny).
    pub fn ask_to_raise_the_timeout(&mut self, call: &str, item: &str) -> Event {
        let args = json!({
            "path": "deploy/api.yaml",
            "old": "timeout: 10m\nretries: 1",
            "new": "timeout: 20m\nretries: 2",
            "count": 1
        });
        self.propose(call, "replace_in_file", args.clone());
        let choices = [ApprovalChoice::Once, ApprovalChoice::Deny];
        self.ask_permission(call, item, "replace_in_file", args, &choices)
    }

    /// Bob denies the approval `item`, and the call ends denied.
    pub fn deny_as_bob(&mut self, call: &str, item: &str, name: &str) -> Event {
        let deny = Resolution::Approval {
            choice: ApprovalChoice::Deny,
        };
        self.resolve(call, item, InboxItemKind::Approval, deny, bob());
        self.finish(
            call,
            name,
            ToolStatus::Denied,
            None,
            Some("denied by Bob Li"),
        )
    }

    /// Alice stops the turn while the approval `item` waits: the item is dismissed and the
    /// call ends interrupted.
    pub fn stop_while_waiting(&mut self, call: &str, item: &str, name: &str) -> Event {
        self.state(EventKind::Interrupted {
            iterations: 1,
            by: Some(alice()),
        });
        let dismissed = Resolution::Dismissed {
            reason: "the turn was stopped".into(),
        };
        self.resolve(call, item, InboxItemKind::Approval, dismissed, alice());
        let stopped = Some("the turn was stopped");
        self.finish(call, name, ToolStatus::Interrupted, None, stopped)
    }

    /// The turn fails on the gateway's rate limit, with [`RATE_LIMITED`] as its message.
    pub fn fail_rate_limited(&mut self) -> Event {
        self.state(EventKind::Error {
            error: RATE_LIMITED.into(),
            error_type: "rate_limited".into(),
            raw: None,
        })
    }

    /// `ask_user` asking where a summary should go (`#ops` recommended, `#deploys`, or free
    /// text), from proposal through `question_requested` to the parked inbox item.
    pub fn ask_where_to_post(&mut self, call: &str, item: &str) -> Event {
        let question = "Where should the summary go?";
        self.propose(call, "ask_user", json!({ "question": question }));
        self.state(EventKind::QuestionRequested {
            tool_call_id: call.into(),
            question: question.into(),
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
        });
        self.park(call, item, InboxItemKind::Question, "ask_user")
    }

    /// Alice answers the question parked as `item` with `text`.
    pub fn answer(&mut self, call: &str, item: &str, text: &str) -> Event {
        self.answer_as(call, item, text, alice())
    }

    /// `by` answers the question parked as `item` with `text`.
    pub fn answer_as(&mut self, call: &str, item: &str, text: &str, by: Actor) -> Event {
        let resolution = Resolution::Answer { text: text.into() };
        self.resolve(call, item, InboxItemKind::Question, resolution, by)
    }

    pub fn park(&mut self, call: &str, item: &str, kind: InboxItemKind, name: &str) -> Event {
        self.state(EventKind::InboxItemParked {
            item_id: item.into(),
            item_kind: kind,
            tool_call_id: Some(call.into()),
            title: format!("Run `{name}`?"),
            visibility: Visibility::Inline,
            requested_by: Some("u_alice".into()),
        })
    }

    pub fn resolve(
        &mut self,
        call: &str,
        item: &str,
        kind: InboxItemKind,
        resolution: Resolution,
        by: Actor,
    ) -> Event {
        self.state(EventKind::InboxItemResolved {
            item_id: item.into(),
            item_kind: kind,
            tool_call_id: Some(call.into()),
            resolution,
            resolved_by: by,
            via: Surface::Slack,
        })
    }

    pub fn run(&mut self, call: &str, name: &str) -> Event {
        self.state(EventKind::ToolStarted {
            tool_call_id: call.into(),
            name: name.into(),
        })
    }

    pub fn finish(
        &mut self,
        call: &str,
        name: &str,
        status: ToolStatus,
        preview: Option<&str>,
        reason: Option<&str>,
    ) -> Event {
        self.state(EventKind::ToolFinished {
            tool_call_id: call.into(),
            name: name.into(),
            status,
            result_preview: preview.map(Into::into),
            reason: reason.map(Into::into),
            display: None,
            standing_rule: None,
        })
    }

    pub fn end(&mut self, status: TurnEndStatus) -> Event {
        self.state(EventKind::TurnEnd {
            status,
            iterations: 2,
        })
    }

    /// Every event folded into a new view.
    pub fn view(&self) -> SessionView {
        fold(&self.events)
    }

    /// The events a store keeps: the state events, without the deltas.
    pub fn state_events(&self) -> Vec<Event> {
        self.events
            .iter()
            .filter(|e| e.is_state())
            .cloned()
            .collect()
    }
}

pub fn fold(events: &[Event]) -> SessionView {
    let mut view = SessionView::new();
    for event in events {
        view.apply(event);
    }
    view
}

pub fn json(card: &Card) -> String {
    serde_json::to_string_pretty(card).unwrap()
}

pub fn turn(id: &str) -> TurnId {
    id.into()
}

pub fn item(id: &str) -> InboxItemId {
    id.into()
}

pub fn call(id: &str) -> ToolCallId {
    id.into()
}
