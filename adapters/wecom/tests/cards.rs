//! Every card state of workmate-cards as WeCom shows it: prompts and outcomes as the
//! `template_card` JSON, turns, notices and run results as the markdown of a stream message.
//! Snapshotted one per state, each checked against WeCom's limits, with what each state must show
//! asserted beside its snapshot.

use insta::{assert_json_snapshot, assert_snapshot};
use serde_json::{Value, json};
use workmate_cards::testing::{
    FAILED_DEPLOYS_ANSWER, RATE_LIMITED, Story, alice, bob, item, long_log, option, turn,
};
use workmate_cards::{
    ButtonAction, Card, CardRef, RunResult, SessionView, card_for, notice_card, run_card, turn_card,
};
use workmate_protocol::{
    Actor, ApprovalChoice, EventKind, InboxItemKind, Resolution, TurnEndStatus,
};
use workmate_wecom::card::{
    MAX_BUTTONS, MAX_STREAM_BYTES, decode_key, markdown, split_stream, task_id, template_card,
};

use crate::limits::{assert_markdown_safe, assert_within_limits};

/// The template card of the card `changed` names, with the task id of its card key, checked
/// against WeCom's limits; every button it carries has its action as its key, in card order.
fn prompt(view: &SessionView, changed: &CardRef) -> Value {
    let (key, card) = card_for(view, changed).expect("the view has the card");
    let json = template_card(&card, &task_id(&key));
    assert_within_limits(&json);
    assert_eq!(json["task_id"], task_id(&key));
    let actions: Vec<ButtonAction> = card
        .blocks
        .iter()
        .filter_map(|b| match b {
            workmate_cards::Block::Actions(buttons) => Some(buttons),
            _ => None,
        })
        .flatten()
        .map(|b| b.action.clone())
        .collect();
    if actions.len() <= MAX_BUTTONS {
        let carried: Vec<ButtonAction> = buttons(&json).into_iter().map(|b| b.2).collect();
        assert_eq!(carried, actions);
    }
    json
}

fn approval_of(view: &SessionView, id: &str) -> Value {
    prompt(view, &CardRef::Approval(item(id)))
}

fn question_of(view: &SessionView, id: &str) -> Value {
    prompt(view, &CardRef::Question(item(id)))
}

/// A card's markdown, checked to be safe and to fit one stream message.
fn md(card: &Card) -> String {
    let text = markdown(card);
    assert_markdown_safe(&text);
    assert!(text.len() <= MAX_STREAM_BYTES, "{} bytes", text.len());
    text
}

/// The markdown of the first segment of turn `tn_1`.
fn turn_md(view: &SessionView) -> String {
    md(&turn_card(view.turn_segment(&turn("tn_1"), 0).unwrap()))
}

/// `(text, style, action)` of every button, in order.
fn buttons(card: &Value) -> Vec<(String, u64, ButtonAction)> {
    card["button_list"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|b| {
                    (
                        b["text"].as_str().unwrap().to_owned(),
                        b["style"].as_u64().unwrap(),
                        decode_key(b["key"].as_str().unwrap()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn sub_title(card: &Value) -> &str {
    card["sub_title_text"].as_str().unwrap_or_default()
}

fn approval(id: &str, choice: ApprovalChoice) -> ButtonAction {
    ButtonAction::Resolve {
        item_id: item(id),
        resolution: Resolution::Approval { choice },
    }
}

fn answer(id: &str, text: &str) -> ButtonAction {
    ButtonAction::Resolve {
        item_id: item(id),
        resolution: Resolution::Answer { text: text.into() },
    }
}

fn stop() -> ButtonAction {
    ButtonAction::Stop {
        session_id: "s_1".into(),
        turn_id: turn("tn_1"),
    }
}

fn button(text: &str, style: u64, action: ButtonAction) -> (String, u64, ButtonAction) {
    (text.to_owned(), style, action)
}

#[test]
fn a_tool_turn_with_an_approval() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Which deploys failed since yesterday?");
    let thinking = turn_md(&s.view());
    assert_eq!(thinking, "> 🤔 Thinking…", "no Stop button in markdown");
    assert_snapshot!("turn_thinking", thinking);
    let stop_card = prompt(&s.view(), &CardRef::Turn(turn("tn_1")));
    assert_eq!(stop_card["card_type"], "button_interaction");
    assert_eq!(stop_card["main_title"]["title"], "🤔 Thinking…");
    assert_eq!(buttons(&stop_card), [button("Stop", 3, stop())]);
    assert_json_snapshot!("turn_stop_button", stop_card);

    s.reasoning("The CI CLI can list failed runs");
    s.delta("Let me check ");
    s.delta("the CI runs.");
    let streamed = turn_md(&s.view());
    assert_eq!(streamed, "> 💭 Reasoning…\n\nLet me check the CI runs.");
    assert_snapshot!("turn_reasoning_streaming", streamed);

    s.message(Some("Let me check the CI runs."), &["run_shell"]);
    s.ask_to_list_failed_runs("call_1", "ib_1");
    let view = s.view();
    let waiting = turn_md(&view);
    assert!(waiting.starts_with("> ⏸️ Waiting for approval"));
    assert_snapshot!("turn_waiting_for_approval", waiting);

    let pending = approval_of(&view, "ib_1");
    assert_eq!(pending["card_type"], "button_interaction");
    assert_eq!(pending["main_title"], json!({ "title": "Run run_shell?" }));
    assert_eq!(
        buttons(&pending),
        [
            button("Approve once", 1, approval("ib_1", ApprovalChoice::Once)),
            button(
                "Always allow this…",
                2,
                approval("ib_1", ApprovalChoice::AlwaysCommand)
            ),
            button(
                "Allow read-only…",
                2,
                approval("ib_1", ApprovalChoice::ReadonlySession)
            ),
            button("Deny", 3, approval("ib_1", ApprovalChoice::Deny)),
        ]
    );
    assert_eq!(
        pending["button_list"][0]["key"],
        r#"{"type":"resolve","item_id":"ib_1","resolution":{"type":"approval","choice":"once"}}"#,
        "the key carries the item and the choice, nothing else"
    );
    assert_eq!(
        pending["horizontal_content_list"][0],
        json!({ "keyname": "Requested…", "value": "Alice Chen" })
    );
    assert!(
        sub_title(&pending)
            .contains("gh run list --status failure --created '>=2026-01-04' --limit 20")
    );
    assert_json_snapshot!("approval_run_shell_pending", pending);

    s.approve_once_as_bob("call_1", "ib_1");
    let view = s.view();
    let continued = turn_md(&view);
    assert!(continued.ends_with("> ↓ Continued below"));
    assert_snapshot!("turn_continued_below", continued);
    let approved = approval_of(&view, "ib_1");
    assert_eq!(approved["card_type"], "text_notice");
    assert_eq!(
        approved["task_id"], pending["task_id"],
        "an update keeps the task id"
    );
    assert!(sub_title(&approved).starts_with("✅ Approved by Bob Li · once\n"));
    assert_json_snapshot!("approval_run_shell_approved", approved);

    s.run("call_1", "run_shell");
    let running = md(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(running.starts_with("> ⚙️ Running `run_shell`…"));
    assert_snapshot!("turn_running_tool", running);

    s.find_two_failed_runs_then_fall_back("call_1");
    s.delta("## Failed deploys\n\nTwo");
    s.message(Some(FAILED_DEPLOYS_ANSWER), &[]);
    s.end(TurnEndStatus::Completed);
    let done = md(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    for expected in [
        "> ✅ Done\n\n",
        "### Failed deploys\n\n",
        "Two deploys **failed** since yesterday:",
        "1. `api` #4812 timed out\n2. `web` #977 failed *lint*  \n  \u{a0}\u{a0}\u{a0}• see \
         [the run](https://ci.example.com/runs/977)",
        "**Service** | **Run** | **Cause**  \napi | 4812 | timeout  \nweb | 977 | lint",
        "> `gh run rerun 4812`",
        "> Both are on `main`.",
        "\n\n---\n\n",
        "I posted the summary to #deploys #ops.",
        "> ↪ Answered by anthropic:claude-sonnet-4-5 instead of openai:gpt-5-mini",
    ] {
        assert!(done.contains(expected), "missing {expected:?} in\n{done}");
    }
    assert_snapshot!("turn_done_markdown", done);
}

#[test]
fn a_denied_write_then_a_failed_turn() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Write the release notes");
    s.ask_to_write_release_notes("call_w", "ib_w");
    let pending = approval_of(&s.view(), "ib_w");
    assert_eq!(buttons(&pending).len(), 3);
    assert!(sub_title(&pending).starts_with("Writes docs/RELEASE.md (25 lines)\n- change 1\n"));
    assert_json_snapshot!("approval_write_file_pending", pending);

    s.deny_as_bob("call_w", "ib_w", "write_file");
    let denied = approval_of(&s.view(), "ib_w");
    assert_eq!(denied["card_type"], "text_notice");
    assert!(sub_title(&denied).starts_with("❌ Denied by Bob Li\n"));
    assert_json_snapshot!("approval_write_file_denied", denied);

    s.fail_rate_limited();
    let failed = md(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(failed.starts_with(&format!("> ❌ Failed: {RATE_LIMITED}")));
    assert!(failed.contains("- ⛔ `write_file`"));
    assert_snapshot!("turn_failed", failed);
}

#[test]
fn an_edit_waits_then_the_turn_is_stopped() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Raise the deploy timeout");
    s.ask_to_raise_the_timeout("call_r", "ib_r");
    let pending = approval_of(&s.view(), "ib_r");
    assert!(sub_title(&pending).contains("-timeout: 10m\n-retries: 1\n+timeout: 20m\n+retries: 2"));
    assert_json_snapshot!("approval_replace_in_file_pending", pending);

    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let view = s.view();
    let dismissed = approval_of(&view, "ib_r");
    assert!(sub_title(&dismissed).starts_with("Dismissed: the turn was stopped\n"));
    assert_json_snapshot!("approval_replace_in_file_dismissed", dismissed);
    let stopped = md(&turn_card(view.turn(&turn("tn_1")).unwrap()));
    assert!(stopped.starts_with("> ⏹️ Stopped"));
    assert!(stopped.contains("Stopped by Alice Chen"));
    assert_snapshot!("turn_stopped", stopped);
}

#[test]
fn patches_unknown_tools_and_automations_show_their_arguments() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Fix the lint error");
    s.ask_to_apply_a_long_patch("call_p", "ib_p");
    s.ask_to_post_a_long_message("call_j", "ib_j");
    s.ask_to_post_the_nightly_digest("call_t", "ib_t");
    let view = s.view();
    let patch = approval_of(&view, "ib_p");
    assert!(sub_title(&patch).starts_with("Changes web/src/nav.ts\n*** Begin Patch\n"));
    assert!(sub_title(&patch).ends_with('…'), "cut to fit");
    assert_json_snapshot!("approval_apply_patch_pending", patch);

    let json_args = approval_of(&view, "ib_j");
    assert!(sub_title(&json_args).starts_with("{\n  \"channel\": \"#ops\","));
    assert!(buttons(&json_args).contains(&button(
        "Always for this…",
        2,
        approval("ib_j", ApprovalChoice::AlwaysTask)
    )));
    assert_json_snapshot!("approval_json_pending", json_args);

    let target = approval_of(&view, "ib_t");
    assert_eq!(
        target["horizontal_content_list"],
        json!([
            { "keyname": "Requested…", "value": "Alice Chen" },
            { "keyname": "Category", "value": "messaging" },
            { "keyname": "Target", "value": "#ops" },
        ])
    );
    assert!(sub_title(&target).ends_with("Why: posting to a channel needs approval"));
    assert_json_snapshot!("approval_standing_target_pending", target);
}

#[test]
fn every_approval_scope_names_who_approved_it() {
    for (resolution, line, name) in [
        (
            ApprovalChoice::AlwaysTool,
            "✅ Approved by Bob Li · always for this tool",
            "approval_approved_always_tool",
        ),
        (
            ApprovalChoice::AlwaysCommand,
            "✅ Approved by Bob Li · always for this command",
            "approval_approved_always_command",
        ),
        (
            ApprovalChoice::ReadonlySession,
            "✅ Approved by Bob Li · read-only commands for this session",
            "approval_approved_readonly_session",
        ),
        (
            ApprovalChoice::AlwaysTask,
            "✅ Approved by Bob Li · always for this automation",
            "approval_approved_always_task",
        ),
    ]
    .map(|(choice, line, name)| (Resolution::Approval { choice }, line, name))
    .into_iter()
    .chain([(
        Resolution::Plan {
            approved: true,
            mode: None,
            feedback: None,
        },
        "Resolved by Bob Li",
        "approval_resolved_otherwise",
    )]) {
        let mut s = Story::new();
        s.start_turn("tn_1", "Which deploys failed since yesterday?");
        s.ask_to_list_failed_runs("call_1", "ib_1");
        s.resolve("call_1", "ib_1", InboxItemKind::Approval, resolution, bob());
        let card = approval_of(&s.view(), "ib_1");
        assert_eq!(card["card_type"], "text_notice", "{name}");
        assert!(sub_title(&card).starts_with(&format!("{line}\n")), "{name}");
        assert_json_snapshot!(name, card);
    }
}

#[test]
fn turns_waiting_for_an_answer_at_the_cap_and_with_notes() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Post a summary");
    s.ask_where_to_post("call_q", "ib_q");
    let waiting = turn_md(&s.view());
    assert!(waiting.starts_with("> ❓ Waiting for an answer"));
    assert_snapshot!("turn_waiting_for_answer", waiting);

    let mut s = Story::new();
    s.start_turn("tn_1", "Keep going");
    s.fail_to_read_until_the_step_limit();
    let capped = turn_md(&s.view());
    assert!(capped.starts_with("> ⚠️ Stopped at the step limit"));
    assert!(capped.contains("- ✗ `read_file` a.txt *— 'a.txt' does not exist*"));
    assert_snapshot!("turn_max_iterations", capped);

    let mut s = Story::new();
    s.start_turn("tn_1", "Summarize the incident");
    s.compact_then_switch_to_auto();
    s.message(Some("The incident is resolved."), &[]);
    s.end(TurnEndStatus::Completed);
    let noted = turn_md(&s.view());
    assert!(noted.contains("> Earlier messages were summarized to save room."));
    assert!(noted.contains("> Mode changed from interactive to auto by Bob Li"));
    assert_snapshot!("turn_done_with_notes", noted);
}

#[test]
fn every_step_outcome_has_its_mark() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Check everything");
    s.try_every_step_outcome();
    let text = turn_md(&s.view());
    for mark in [
        "- ✓ `read_file`",
        "- ✗ `fetch_url`",
        "- ⛔ `write_file`",
        "- ⏹ `run_shell`",
        "- ⏳ `search_code`",
        "- ⏸ `apply_patch`",
    ] {
        assert!(text.contains(mark), "missing {mark} in\n{text}");
    }
    assert_snapshot!("turn_every_step_outcome", text);
}

#[test]
fn questions_offer_their_options_and_show_the_answer() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Post a summary");
    s.ask_where_to_post("call_q", "ib_q");
    let pending = question_of(&s.view(), "ib_q");
    assert_eq!(
        pending["main_title"],
        json!({ "title": "Where should the summary go?", "desc": "Channel" })
    );
    assert_eq!(
        buttons(&pending),
        [
            button("#ops", 1, answer("ib_q", "#ops")),
            button("#deploys", 2, answer("ib_q", "#deploys")),
        ]
    );
    assert!(sub_title(&pending).contains("• #ops (recommended) — The channel you named"));
    assert!(sub_title(&pending).ends_with("Or reply in the thread to answer."));
    assert_json_snapshot!("question_pending", pending);

    s.answer("call_q", "ib_q", "#ops");
    let answered = question_of(&s.view(), "ib_q");
    assert_eq!(answered["card_type"], "text_notice");
    assert_eq!(answered["task_id"], pending["task_id"]);
    assert!(sub_title(&answered).starts_with("💬 Answered by Alice Chen: #ops"));
    assert_json_snapshot!("question_answered", answered);

    let mut open = Story::new();
    open.start_turn("tn_1", "Post a summary");
    open.ask_which_channels("call_q", "ib_q", Vec::new(), true, false);
    let open = question_of(&open.view(), "ib_q");
    assert_eq!(open["card_type"], "text_notice", "nothing to click");
    assert_eq!(sub_title(&open), "Reply in the thread to answer.");
    assert_json_snapshot!("question_free_text_pending", open);

    let mut multi = Story::new();
    multi.start_turn("tn_1", "Post a summary");
    multi.ask_which_channels(
        "call_q",
        "ib_q",
        vec![option("#ops"), option("#deploys")],
        false,
        true,
    );
    let multi = question_of(&multi.view(), "ib_q");
    assert_eq!(buttons(&multi).len(), 2);
    assert_eq!(sub_title(&multi), "To choose several, reply in the thread.");
    assert_json_snapshot!("question_multi_pending", multi);

    let mut dismissed = Story::new();
    dismissed.start_turn("tn_1", "Post a summary");
    dismissed.ask_which_channels("call_q", "ib_q", vec![option("#ops")], false, false);
    let gone = Resolution::Dismissed {
        reason: "the session was deleted".into(),
    };
    dismissed.resolve("call_q", "ib_q", InboxItemKind::Question, gone, alice());
    let dismissed = question_of(&dismissed.view(), "ib_q");
    assert_eq!(sub_title(&dismissed), "Dismissed: the session was deleted");
    assert_json_snapshot!("question_dismissed", dismissed);
}

#[test]
fn a_grouped_question_and_one_with_more_options_than_buttons() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Plan the release");
    s.ask_for_a_release_plan("call_g", "ib_g");
    let grouped = question_of(&s.view(), "ib_g");
    assert_eq!(
        grouped["card_type"], "text_notice",
        "one click cannot answer a form"
    );
    assert_eq!(
        grouped["main_title"],
        json!({ "title": "Which day?", "desc": "Release" })
    );
    let text = sub_title(&grouped);
    assert!(text.starts_with("Reply in the thread to answer.\n• Monday — Release Monday\n"));
    assert!(text.contains("\nWho runs it?\n• Alice — Release Alice"));
    assert_json_snapshot!("question_grouped_pending", grouped);

    let mut s = Story::new();
    s.start_turn("tn_1", "Post a summary");
    let options = (1..=25).map(|i| option(&format!("option {i}"))).collect();
    s.ask_which_channels("call_q", "ib_q", options, true, false);
    let many = question_of(&s.view(), "ib_q");
    assert_eq!(buttons(&many).len(), MAX_BUTTONS);
    assert!(
        sub_title(&many).ends_with("… 19 more buttons not shown; reply in the thread instead.")
    );
    assert_json_snapshot!("question_more_options_than_buttons", many);

    // A person other than the turn's author is shown by id.
    let mut s = Story::new();
    s.start_turn("tn_1", "Post a summary");
    s.ask_where_to_post("call_q", "ib_q");
    let deploys = Resolution::Answer {
        text: "#deploys".into(),
    };
    s.resolve(
        "call_q",
        "ib_q",
        InboxItemKind::Question,
        deploys,
        Actor::new("wm_7f3a"),
    );
    let card = question_of(&s.view(), "ib_q");
    assert!(sub_title(&card).starts_with("💬 Answered by wm_7f3a: #deploys"));
}

#[test]
fn a_session_notice() {
    let mut s = Story::new();
    s.between_turns();
    s.state(EventKind::ModelSwitched {
        from: Some("openai:gpt-5-mini".into()),
        to: "anthropic:claude-sonnet-4-5".into(),
        text: "Model switched to anthropic:claude-sonnet-4-5 by <@wm_1> for @all".into(),
    });
    let view = s.view();
    let notice = md(&notice_card(&view.notices()[0]));
    assert_eq!(
        notice,
        "> Model switched to anthropic:claude-sonnet-4-5 by &lt;@wm\\_1> for @\u{2060}all"
    );
    assert_snapshot!("notice", notice);
}

#[test]
fn automation_runs_are_titled() {
    let done = run_card(&RunResult {
        title: "Nightly digest".into(),
        ok: true,
        trigger: "schedule".into(),
        took_ms: Some(75_000),
        summary: Some("Posted the digest to **#ops**:\n\n- 3 deploys\n- 1 incident".into()),
        error: None,
        artifacts: vec!["digest.md".into(), "reports/2026-01-05.csv".into()],
    });
    let text = md(&done);
    assert!(
        text.starts_with("### ⏰ Nightly digest\n\n> ✅ Done · scheduled run · took 1 min 15 s")
    );
    assert!(text.contains("**Files**\n\n- `digest.md`\n- `reports/2026-01-05.csv`"));
    assert_snapshot!("run_done", text);
    let notice = template_card(&done, &task_id("run:r_1"));
    assert_within_limits(&notice);
    assert_eq!(notice["main_title"]["title"], "⏰ Nightly digest");
    assert!(sub_title(&notice).starts_with("✅ Done · scheduled run · took 1 min 15 s\n"));
    assert_json_snapshot!("run_done_notice", notice);

    let failed = md(&run_card(&RunResult {
        title: "Sales digest".into(),
        ok: false,
        trigger: "catchup".into(),
        took_ms: Some(4_000),
        summary: None,
        error: Some("the gateway is over quota".into()),
        artifacts: Vec::new(),
    }));
    assert!(failed.contains("> ❌ Failed · catch-up run"));
    assert!(failed.contains("> **Error:** the gateway is over quota"));
    assert_snapshot!("run_failed", failed);
}

#[test]
fn model_text_cannot_become_markup() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Say hi");
    let hostile = "Hi @all and <@wm_1>!\n\n\
<font color=\"warning\">alarm</font> [click](javascript:alert(1)) ![img](https://e.com/x.png)\n\n\
```\n<@wm_1> `tick`\n```\n\n- item\n+ plus\n1) one\n\n# 2026. a year\n\n| <@all> | x |\n|---|---|\n| a | b |";
    s.message(Some(hostile), &[]);
    s.end(TurnEndStatus::Completed);
    let text = turn_md(&s.view());
    assert!(!text.contains("<font"), "no colour in\n{text}");
    assert!(!text.contains("](javascript:"));
    assert!(text.contains("&lt;font color=\"warning\">alarm&lt;/font>"));
    assert!(
        text.contains("> &lt;@wm\\_1> \\`tick\\`"),
        "code that could mention is text"
    );
    assert_snapshot!("turn_done_markup_escaped", text);
}

#[test]
fn code_and_tables_stay_readable() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Show me");
    let answer = "```python\ndef f(x):\n    if x < 2:\n        return `x`\n\n    return [x]\n```\n\n\
| Service | Owner | Note |\n|---|:-:|---|\n| api | | a \\| b |\n| - | web | `x` |\n| **bold** |";
    s.message(Some(answer), &[]);
    s.end(TurnEndStatus::Completed);
    let text = turn_md(&s.view());
    assert!(text.contains(
        "> `def f(x):`  \n> `\u{a0}\u{a0}\u{a0}\u{a0}if x < 2:`  \n\
         > \u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}return \\`x\\`\n>\n\
         > `\u{a0}\u{a0}\u{a0}\u{a0}return [x]`"
    ));
    assert!(
        text.contains("**Service** | **Owner** | **Note**  \napi |  | a \\| b  \n\\- | web | x")
    );
    assert_snapshot!("turn_code_and_tables", text);
}

#[test]
fn a_long_answer_is_split_into_stream_messages() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Dump the log");
    s.message(Some(&long_log(800)), &[]);
    s.end(TurnEndStatus::Completed);
    let text = markdown(&turn_card(&s.view().turns()[0]));
    assert_markdown_safe(&text);
    let parts = split_stream(&text, MAX_STREAM_BYTES);
    assert_eq!(parts.concat(), text);
    assert_eq!(parts.len(), 3);
    let outline: Vec<String> = parts
        .iter()
        .map(|part| {
            assert!(part.len() <= MAX_STREAM_BYTES);
            let lines: Vec<&str> = part.lines().collect();
            format!(
                "{} bytes, {} lines: {:?} … {:?}",
                part.len(),
                lines.len(),
                lines[0],
                lines[lines.len() - 1]
            )
        })
        .collect();
    assert!(parts[0].starts_with("> ✅ Done\n\nLine 0001"));
    assert!(parts[2].ends_with("Line 0800: the quick brown fox jumps over the lazy dog."));
    assert_snapshot!("turn_long_answer_split", outline.join("\n"));
}
