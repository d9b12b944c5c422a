//! The scenarios every renderer's tests set up, and the data they use.

use serde_json::json;
use workmate_protocol::{
    ApprovalChoice, Event, EventKind, InboxItemKind, PermissionMode, QuestionOption, Resolution,
    ToolStatus, TurnEndStatus,
};

use super::{Story, alice, bob};

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
            approvals_required: None,
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

    /// `propose_plan` of a two-step plan for the health route, waiting for approval.
    pub fn propose_the_health_route(&mut self, call: &str, item: &str) -> Event {
        let plan = "## Add a health route\n1. Write the `/healthz` handler\n2. Test it";
        self.propose(call, "propose_plan", json!({ "plan": plan }));
        self.state(EventKind::PlanProposed {
            tool_call_id: call.into(),
            plan: plan.into(),
        });
        self.park(call, item, InboxItemKind::Plan, "propose_plan")
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
    /// A new story whose turn waits for its plan to be approved (item `ib_p`).
    pub fn proposing_a_plan() -> Self {
        let mut story = Self::with_turn("Add a health route");
        story.propose_the_health_route("call_p", "ib_p");
        story
    }

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
