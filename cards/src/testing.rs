//! Test support (feature `test-support`): a builder for a session's event stream, numbered as the
//! engine numbers it, for the tests of this crate and of the platform adapters that render its
//! cards.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    clippy::new_without_default,
    missing_docs
)]

use crate::{
    Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText, RunResult, SessionView, Step,
    StepOutcome, TurnCard, TurnStatus, turn_card,
};
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

/// A card of every kind of block, each empty: a renderer leaves them all out.
pub fn empty_blocks_card() -> Card {
    Card {
        blocks: vec![
            Block::Heading { text: "  ".into() },
            Block::Text(RichText(vec![Inline::Text(" \n ".into())])),
            Block::Context(Vec::new()),
            Block::Code {
                language: None,
                text: String::new(),
            },
            Block::Table {
                header: Vec::new(),
                rows: Vec::new(),
            },
            Block::Fields(vec![(String::new(), String::new())]),
            Block::List {
                ordered: true,
                items: Vec::new(),
            },
            Block::Actions(Vec::new()),
        ],
    }
}

/// The answer every renderer's "done" card shows: a heading, bold, an ordered list with a nested
/// link, a table, a code block, a quote, a rule and struck-through text.
pub const FAILED_DEPLOYS_ANSWER: &str = "## Failed deploys\n\nTwo deploys **failed** since yesterday:\n\n\
1. `api` #4812 timed out\n2. `web` #977 failed *lint*\n   - see [the run](https://ci.example.com/runs/977)\n\n\
| Service | Run | Cause |\n|---|---|---|\n| api | 4812 | timeout |\n| web | 977 | lint |\n\n\
```sh\ngh run rerun 4812\n```\n\n> Both are on `main`.\n\n---\n\nI posted the summary to ~~#deploys~~ #ops.";

/// A question option with a label and nothing else.
pub fn option(label: &str) -> QuestionOption {
    QuestionOption {
        label: label.into(),
        description: None,
        recommended: false,
        preview: None,
    }
}

/// `lines` numbered log lines, one per line.
pub fn long_log(lines: usize) -> String {
    (1..=lines)
        .map(|i| format!("Line {i:04}: the quick brown fox jumps over the lazy dog."))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Story {
    /// `post_message` of the nightly digest to `#ops`, an automation's standing target, waiting
    /// for approval (once, always for this automation, deny).
    pub fn ask_to_post_the_nightly_digest(&mut self, call: &str, item: &str) -> Event {
        let args = json!({ "channel": "#ops", "text": "Nightly digest" });
        self.propose(call, "post_message", args.clone());
        self.state(EventKind::PermissionRequired {
            tool_call_id: call.into(),
            name: "post_message".into(),
            arguments: args,
            reason: "posting to a channel needs approval".into(),
            category: "messaging".into(),
            standing_target: Some("#ops".into()),
            readonly_ok: false,
            choices: vec![
                ApprovalChoice::Once,
                ApprovalChoice::AlwaysTask,
                ApprovalChoice::Deny,
            ],
        });
        self.park(call, item, InboxItemKind::Approval, "post_message")
    }

    /// `ask_user` asking "Which channels?" with `options` and these flags, parked as `item`.
    pub fn ask_which_channels(
        &mut self,
        call: &str,
        item: &str,
        options: Vec<QuestionOption>,
        allow_text: bool,
        multi: bool,
    ) -> Event {
        self.propose(call, "ask_user", json!({ "question": "Which channels?" }));
        self.state(EventKind::QuestionRequested {
            tool_call_id: call.into(),
            question: "Which channels?".into(),
            options,
            allow_text,
            multi,
            header: String::new(),
            questions: Vec::new(),
        });
        self.park(call, item, InboxItemKind::Question, "ask_user")
    }

    /// `ask_user` with a form of two questions (which day, who runs it), parked as `item`.
    pub fn ask_for_a_release_plan(&mut self, call: &str, item: &str) -> Event {
        self.propose(call, "ask_user", json!({}));
        let question =
            |header: &str, question: &str, labels: &[&str]| workmate_protocol::Question {
                question: question.into(),
                header: header.into(),
                options: labels
                    .iter()
                    .map(|l| QuestionOption {
                        description: Some(format!("Release {l}")),
                        ..option(l)
                    })
                    .collect(),
                allow_text: true,
                multi: false,
            };
        self.state(EventKind::QuestionRequested {
            tool_call_id: call.into(),
            question: "Release plan".into(),
            options: Vec::new(),
            allow_text: true,
            multi: false,
            header: "Release".into(),
            questions: vec![
                question("Day", "Which day?", &["Monday", "Tuesday"]),
                question("Owner", "Who runs it?", &["Alice", "Bob"]),
            ],
        });
        self.park(call, item, InboxItemKind::Question, "ask_user")
    }

    /// Six calls, one per step state: ok, error, denied, interrupted, running, and one still
    /// waiting to start.
    pub fn try_every_step_outcome(&mut self) {
        let calls = [
            ("call_ok", "read_file", Some(ToolStatus::Ok)),
            ("call_err", "fetch_url", Some(ToolStatus::Error)),
            ("call_den", "write_file", Some(ToolStatus::Denied)),
            ("call_int", "run_shell", Some(ToolStatus::Interrupted)),
            ("call_run", "search_code", None),
            ("call_wait", "apply_patch", None),
        ];
        for (call, name, _) in calls {
            self.propose(call, name, json!({ "path": format!("{call}.txt") }));
        }
        for (call, name, status) in calls {
            if call == "call_wait" {
                continue;
            }
            self.run(call, name);
            if let Some(status) = status {
                let reason = (status != ToolStatus::Ok).then_some("it did not work out");
                self.finish(call, name, status, Some("12 lines"), reason);
            }
        }
    }

    /// `read_file` of a missing file fails, and the turn ends at the step limit.
    pub fn fail_to_read_until_the_step_limit(&mut self) -> Event {
        self.propose("call_1", "read_file", json!({ "path": "a.txt" }));
        self.run("call_1", "read_file");
        let missing = Some("'a.txt' does not exist");
        self.finish("call_1", "read_file", ToolStatus::Error, None, missing);
        self.end(TurnEndStatus::MaxIterationsExceeded)
    }

    /// The conversation is compacted and Bob switches the session to auto mode.
    pub fn compact_then_switch_to_auto(&mut self) -> Event {
        self.state(EventKind::Compacted {
            text: "Earlier messages were summarized to save room.".into(),
        });
        self.state(EventKind::ModeChanged {
            from: PermissionMode::Interactive,
            to: PermissionMode::Auto,
            by: bob(),
        })
    }
}

/// New stories of one turn, `tn_1`, set up as the card tests of every renderer start them.
impl Story {
    /// A new story whose turn `tn_1` was just asked `input`.
    pub fn with_turn(input: &str) -> Self {
        let mut story = Self::new();
        story.start_turn("tn_1", input);
        story
    }

    /// A new story whose turn `tn_1` Alice has just started, asking which deploys failed since
    /// yesterday: the turn of the failed-runs approval.
    pub fn asking_which_deploys_failed() -> Self {
        Self::with_turn("Which deploys failed since yesterday?")
    }

    /// A new story whose turn asks to write the release notes, parked as `ib_w` (call `call_w`;
    /// see [`Story::ask_to_write_release_notes`]).
    pub fn asking_to_write_release_notes() -> Self {
        let mut story = Self::with_turn("Write the release notes");
        story.ask_to_write_release_notes("call_w", "ib_w");
        story
    }

    /// A new story whose turn asks to raise the deploy timeout, parked as `ib_r` (call `call_r`;
    /// see [`Story::ask_to_raise_the_timeout`]).
    pub fn asking_to_raise_the_timeout() -> Self {
        let mut story = Self::with_turn("Raise the deploy timeout");
        story.ask_to_raise_the_timeout("call_r", "ib_r");
        story
    }

    /// A new story whose turn asks to apply a long patch, parked as `ib_p` (call `call_p`), and
    /// to post a long message, parked as `ib_j` (call `call_j`).
    pub fn asking_with_long_arguments() -> Self {
        let mut story = Self::with_turn("Fix the lint error");
        story.ask_to_apply_a_long_patch("call_p", "ib_p");
        story.ask_to_post_a_long_message("call_j", "ib_j");
        story
    }

    /// A new story whose turn asks where the summary should go, parked as `ib_q` (call `call_q`;
    /// see [`Story::ask_where_to_post`]).
    pub fn asking_where_to_post() -> Self {
        let mut story = Self::with_turn("Post a summary");
        story.ask_where_to_post("call_q", "ib_q");
        story
    }

    /// A new story whose turn asks "Which channels?" with `options` and these flags, parked as
    /// `ib_q` (call `call_q`; see [`Story::ask_which_channels`]).
    pub fn asking_which_channels(
        options: Vec<QuestionOption>,
        allow_text: bool,
        multi: bool,
    ) -> Self {
        let mut story = Self::with_turn("Post a summary");
        story.ask_which_channels("call_q", "ib_q", options, allow_text, multi);
        story
    }

    /// A new story whose turn asks for a release plan, a form of two questions, parked as `ib_g`
    /// (call `call_g`; see [`Story::ask_for_a_release_plan`]).
    pub fn asking_for_a_release_plan() -> Self {
        let mut story = Self::with_turn("Plan the release");
        story.ask_for_a_release_plan("call_g", "ib_g");
        story
    }

    /// A new story whose turn has a step in every state (see [`Story::try_every_step_outcome`]).
    pub fn trying_every_step_outcome() -> Self {
        let mut story = Self::with_turn("Check everything");
        story.try_every_step_outcome();
        story
    }

    /// A new story whose turn ends at the step limit (see
    /// [`Story::fail_to_read_until_the_step_limit`]).
    pub fn failing_until_the_step_limit() -> Self {
        let mut story = Self::with_turn("Keep going");
        story.fail_to_read_until_the_step_limit();
        story
    }

    /// A new story whose turn notes a compaction and a mode change, then completes with a
    /// one-line answer.
    pub fn summarizing_the_incident() -> Self {
        let mut story = Self::with_turn("Summarize the incident");
        story.compact_then_switch_to_auto();
        story.message(Some("The incident is resolved."), &[]);
        story.end(TurnEndStatus::Completed);
        story
    }

    /// A new story whose turn, asked `input`, completes with `answer`.
    pub fn completed_turn(input: &str, answer: &str) -> Self {
        let mut story = Self::with_turn(input);
        story.message(Some(answer), &[]);
        story.end(TurnEndStatus::Completed);
        story
    }

    /// A new story whose turn asks to list the failed runs, parked as `ib_1` (call `call_1`),
    /// and Bob resolves that approval with `resolution`.
    pub fn failed_runs_resolved_by_bob(resolution: Resolution) -> Self {
        let mut story = Self::asking_which_deploys_failed();
        story.ask_to_list_failed_runs("call_1", "ib_1");
        story.resolve("call_1", "ib_1", InboxItemKind::Approval, resolution, bob());
        story
    }
}

impl Story {
    /// The model reasons, then streams "Let me check the CI runs." in two deltas.
    pub fn reason_then_stream_a_reply(&mut self) -> Event {
        self.reasoning("The CI CLI can list failed runs");
        self.delta("Let me check ");
        self.delta("the CI runs.")
    }

    /// The model says "Let me check the CI runs." and calls `run_shell`, which waits for approval
    /// (see [`Story::ask_to_list_failed_runs`]).
    pub fn check_the_ci_runs(&mut self, call: &str, item: &str) -> Event {
        self.message(Some("Let me check the CI runs."), &["run_shell"]);
        self.ask_to_list_failed_runs(call, item)
    }

    /// A new round trip starts streaming, then ends with [`FAILED_DEPLOYS_ANSWER`], and the turn
    /// completes.
    pub fn answer_with_the_failed_deploys(&mut self) -> Event {
        self.delta("## Failed deploys\n\nTwo");
        self.message(Some(FAILED_DEPLOYS_ANSWER), &[]);
        self.end(TurnEndStatus::Completed)
    }

    /// Deleting the session dismisses the question parked as `item` (Alice resolves it).
    pub fn dismiss_with_the_session(&mut self, call: &str, item: &str) -> Event {
        let gone = Resolution::Dismissed {
            reason: "the session was deleted".into(),
        };
        self.resolve(call, item, InboxItemKind::Question, gone, alice())
    }

    /// Between turns, the model is switched from `openai:gpt-5-mini` to
    /// `anthropic:claude-sonnet-4-5`, with `text` as the notice.
    pub fn switch_the_model(&mut self, text: &str) -> Event {
        self.between_turns();
        self.state(EventKind::ModelSwitched {
            from: Some("openai:gpt-5-mini".into()),
            to: "anthropic:claude-sonnet-4-5".into(),
            text: text.into(),
        })
    }
}

/// Every way to resolve an approval but "approve once" and "deny", with the outcome line its card
/// shows when Bob resolves it, and the name the renderers' tests give that card's snapshot.
pub fn other_resolutions() -> [(Resolution, &'static str, &'static str); 5] {
    let approved = |choice| Resolution::Approval { choice };
    [
        (
            approved(ApprovalChoice::AlwaysTool),
            "✅ Approved by Bob Li · always for this tool",
            "approval_approved_always_tool",
        ),
        (
            approved(ApprovalChoice::AlwaysCommand),
            "✅ Approved by Bob Li · always for this command",
            "approval_approved_always_command",
        ),
        (
            approved(ApprovalChoice::ReadonlySession),
            "✅ Approved by Bob Li · read-only commands for this session",
            "approval_approved_readonly_session",
        ),
        (
            approved(ApprovalChoice::AlwaysTask),
            "✅ Approved by Bob Li · always for this automation",
            "approval_approved_always_task",
        ),
        (
            Resolution::Plan {
                approved: true,
                mode: None,
                feedback: None,
            },
            "Resolved by Bob Li",
            "approval_resolved_otherwise",
        ),
    ]
}

/// The action of a button that resolves the approval `id` with `choice`.
pub fn approval(id: &str, choice: ApprovalChoice) -> ButtonAction {
    ButtonAction::Resolve {
        item_id: item(id),
        resolution: Resolution::Approval { choice },
    }
}

/// The action of a button that answers the question `id` with `text`.
pub fn answer(id: &str, text: &str) -> ButtonAction {
    ButtonAction::Resolve {
        item_id: item(id),
        resolution: Resolution::Answer { text: text.into() },
    }
}

/// The action of the Stop button of turn `tn_1` of session `s_1`.
pub fn stop() -> ButtonAction {
    ButtonAction::Stop {
        session_id: "s_1".into(),
        turn_id: turn("tn_1"),
    }
}

/// Every button of the card, in order.
pub fn every_button(card: &Card) -> impl Iterator<Item = &Button> {
    card.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Actions(buttons) => Some(buttons),
            _ => None,
        })
        .flatten()
}

/// The action of every button of the card, in order.
pub fn actions(card: &Card) -> Vec<ButtonAction> {
    every_button(card).map(|b| b.action.clone()).collect()
}

/// A text block of `text`, unstyled.
pub fn paragraph(text: &str) -> Block {
    Block::Text(RichText(vec![Inline::Text(text.to_owned())]))
}

/// A row of one button.
pub fn one_button(label: &str, action: ButtonAction, style: ButtonStyle) -> Block {
    Block::Actions(vec![Button {
        label: label.to_owned(),
        action,
        style,
    }])
}

/// `count` buttons with labels of over a hundred characters, the `i`th approving `ib_{i}` once.
pub fn long_label_buttons(count: usize) -> Vec<Button> {
    (0..count)
        .map(|i| Button {
            label: format!("{i} {}", "long label ".repeat(10)),
            action: approval(&format!("ib_{i}"), ApprovalChoice::Once),
            style: ButtonStyle::Default,
        })
        .collect()
}

/// A card with `short`, `md` and `long` in every kind of block but a table: a heading, text,
/// context, a quote (each with every kind of inline), fields, code, a list, a divider and a
/// button labelled `long` that answers the question `short` with `md`.
pub fn any_text_in_every_block(short: &str, md: &str, long: &str) -> Card {
    let inlines = vec![
        Inline::Bold(md.to_owned()),
        Inline::Italic(short.to_owned()),
        Inline::Code(md.to_owned()),
        Inline::Strike(long.to_owned()),
        Inline::Link {
            text: short.to_owned(),
            url: md.to_owned(),
        },
        Inline::Text(long.to_owned()),
    ];
    Card {
        blocks: vec![
            Block::Heading {
                text: md.to_owned(),
            },
            Block::Text(RichText(inlines.clone())),
            Block::Context(inlines.clone()),
            Block::Quote(RichText(inlines.clone())),
            Block::Fields(vec![
                (short.to_owned(), long.to_owned()),
                (md.to_owned(), short.to_owned()),
            ]),
            Block::Code {
                language: Some(short.to_owned()),
                text: long.to_owned(),
            },
            Block::List {
                ordered: true,
                items: vec![RichText(inlines); 3],
            },
            Block::Divider,
            one_button(long, answer(short, md), ButtonStyle::Primary),
        ],
    }
}

/// A turn card of `steps` tool calls, `(name, text, kind)` each, with the outcome `kind` picks
/// (ok, error, denied, interrupted, running, waiting), and `answer`.
pub fn busy_turn(steps: &[(String, String, u8)], answer: &str) -> Card {
    let steps = steps
        .iter()
        .enumerate()
        .map(|(i, (name, text, kind))| {
            let status = match kind % 6 {
                0 => Some(ToolStatus::Ok),
                1 => Some(ToolStatus::Error),
                2 => Some(ToolStatus::Denied),
                3 => Some(ToolStatus::Interrupted),
                _ => None,
            };
            Step {
                tool_call_id: format!("call_{i}").into(),
                name: name.clone(),
                summary: text.clone(),
                started: kind % 6 != 5,
                outcome: status.map(|status| StepOutcome {
                    status,
                    detail: text.clone(),
                }),
            }
        })
        .collect();
    turn_card(&TurnCard {
        session_id: "s_1".into(),
        turn_id: "tn_1".into(),
        segment: 0,
        continued: false,
        author: None,
        status: TurnStatus::RunningTool("run_shell".into()),
        steps,
        answer: answer.to_owned(),
        reasoning_hint: true,
        notes: vec![answer.chars().take(300).collect()],
    })
}

/// The nightly digest's scheduled run: done in 75 s, with a summary and two files.
pub fn nightly_digest_run() -> RunResult {
    RunResult {
        title: "Nightly digest".into(),
        ok: true,
        trigger: "schedule".into(),
        took_ms: Some(75_000),
        summary: Some("Posted the digest to **#ops**:\n\n- 3 deploys\n- 1 incident".into()),
        error: None,
        artifacts: vec!["digest.md".into(), "reports/2026-01-05.csv".into()],
    }
}

/// The sales digest's catch-up run, failed after 4 s on the gateway's quota.
pub fn failed_sales_digest_run() -> RunResult {
    RunResult {
        title: "Sales digest".into(),
        ok: false,
        trigger: "catchup".into(),
        took_ms: Some(4_000),
        summary: None,
        error: Some("the gateway is over quota".into()),
        artifacts: Vec::new(),
    }
}
