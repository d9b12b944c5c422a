//! Every card state of workmate-cards as WeCom shows it: prompts and outcomes as the
//! `template_card` JSON, turns, notices and run results as the markdown of a stream message.
//! Snapshotted one per state, each checked against WeCom's limits, with what each state must show
//! asserted beside its snapshot.

use insta::{assert_json_snapshot, assert_snapshot};
use serde_json::{Value, json};
use workmate_cards::testing::{
    RATE_LIMITED, Story, actions, answer, approval, failed_sales_digest_run, item, long_log,
    nightly_digest_run, option, other_resolutions, stop, turn,
};
use workmate_cards::{
    ButtonAction, Card, CardRef, SessionView, card_for, notice_card, run_card, turn_card,
};
use workmate_protocol::{Actor, ApprovalChoice};
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
    let actions = actions(&card);
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

fn button(text: &str, style: u64, action: ButtonAction) -> (String, u64, ButtonAction) {
    (text.to_owned(), style, action)
}

#[test]
fn a_tool_turn_with_an_approval() {
    let mut s = Story::asking_which_deploys_failed();
    let thinking = turn_md(&s.view());
    assert_eq!(thinking, "> 🤔 Thinking…", "no Stop button in markdown");
    assert_snapshot!("turn_thinking", thinking);
    let stop_card = prompt(&s.view(), &CardRef::Turn(turn("tn_1")));
    assert_eq!(stop_card["card_type"], "button_interaction");
    assert_eq!(stop_card["main_title"]["title"], "🤔 Thinking…");
    assert_eq!(buttons(&stop_card), [button("Stop", 3, stop())]);
    assert_json_snapshot!("turn_stop_button", stop_card);

    s.reason_then_stream_a_reply();
    let streamed = turn_md(&s.view());
    assert_eq!(streamed, "> 💭 Reasoning…\n\nLet me check the CI runs.");
    assert_snapshot!("turn_reasoning_streaming", streamed);

    s.check_the_ci_runs("call_1", "ib_1");
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
                "Always allow command",
                2,
                approval("ib_1", ApprovalChoice::AlwaysCommand)
            ),
            button(
                "Allow read-only",
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
        json!({ "keyname": "Asked by", "value": "Alice Chen" })
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
    s.answer_with_the_failed_deploys();
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
    let mut s = Story::asking_to_write_release_notes();
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
    let mut s = Story::asking_to_raise_the_timeout();
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
    let mut s = Story::asking_with_long_arguments();
    s.ask_to_post_the_nightly_digest("call_t", "ib_t");
    let view = s.view();
    let patch = approval_of(&view, "ib_p");
    assert!(sub_title(&patch).starts_with("Changes web/src/nav.ts\n*** Begin Patch\n"));
    assert!(
        sub_title(&patch).ends_with(" more lines"),
        "cut to fit, saying how much is left out"
    );
    assert_json_snapshot!("approval_apply_patch_pending", patch);

    let json_args = approval_of(&view, "ib_j");
    assert!(sub_title(&json_args).starts_with("{\n  \"channel\": \"#ops\","));
    assert!(buttons(&json_args).contains(&button(
        "Always in automation",
        2,
        approval("ib_j", ApprovalChoice::AlwaysTask)
    )));
    assert_json_snapshot!("approval_json_pending", json_args);

    let target = approval_of(&view, "ib_t");
    assert_eq!(
        target["horizontal_content_list"],
        json!([
            { "keyname": "Asked by", "value": "Alice Chen" },
            { "keyname": "Category", "value": "messaging" },
            { "keyname": "Target", "value": "#ops" },
        ])
    );
    assert!(sub_title(&target).ends_with("Why: posting to a channel needs approval"));
    assert_json_snapshot!("approval_standing_target_pending", target);
}

#[test]
fn every_approval_scope_names_who_approved_it() {
    for (resolution, line, name) in other_resolutions() {
        let s = Story::failed_runs_resolved_by_bob(resolution);
        let card = approval_of(&s.view(), "ib_1");
        assert_eq!(card["card_type"], "text_notice", "{name}");
        assert!(sub_title(&card).starts_with(&format!("{line}\n")), "{name}");
        assert_json_snapshot!(name, card);
    }
}

#[test]
fn turns_waiting_for_an_answer_at_the_cap_and_with_notes() {
    let s = Story::asking_where_to_post();
    let waiting = turn_md(&s.view());
    assert!(waiting.starts_with("> ❓ Waiting for an answer"));
    assert_snapshot!("turn_waiting_for_answer", waiting);

    let s = Story::failing_until_the_step_limit();
    let capped = turn_md(&s.view());
    assert!(capped.starts_with("> ⚠️ Stopped at the step limit"));
    assert!(capped.contains("- ✗ `read_file` a.txt *— 'a.txt' does not exist*"));
    assert_snapshot!("turn_max_iterations", capped);

    let s = Story::summarizing_the_incident();
    let noted = turn_md(&s.view());
    assert!(noted.contains("> Earlier messages were summarized to save room."));
    assert!(noted.contains("> Mode changed from interactive to auto by Bob Li"));
    assert_snapshot!("turn_done_with_notes", noted);
}

#[test]
fn every_step_outcome_has_its_mark() {
    let s = Story::trying_every_step_outcome();
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
    let mut s = Story::asking_where_to_post();
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

    let open = Story::asking_which_channels(Vec::new(), true, false);
    let open = question_of(&open.view(), "ib_q");
    assert_eq!(open["card_type"], "text_notice", "nothing to click");
    assert_eq!(sub_title(&open), "Reply in the thread to answer.");
    assert_json_snapshot!("question_free_text_pending", open);

    let multi = Story::asking_which_channels(vec![option("#ops"), option("#deploys")], false, true);
    let multi = question_of(&multi.view(), "ib_q");
    assert_eq!(buttons(&multi).len(), 2);
    assert_eq!(sub_title(&multi), "To choose several, reply in the thread.");
    assert_json_snapshot!("question_multi_pending", multi);

    let mut dismissed = Story::asking_which_channels(vec![option("#ops")], false, false);
    dismissed.dismiss_with_the_session("call_q", "ib_q");
    let dismissed = question_of(&dismissed.view(), "ib_q");
    assert_eq!(sub_title(&dismissed), "Dismissed: the session was deleted");
    assert_json_snapshot!("question_dismissed", dismissed);
}

#[test]
fn a_grouped_question_and_one_with_more_options_than_buttons() {
    let s = Story::asking_for_a_release_plan();
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

    let options = (1..=25).map(|i| option(&format!("option {i}"))).collect();
    let s = Story::asking_which_channels(options, true, false);
    let many = question_of(&s.view(), "ib_q");
    assert_eq!(buttons(&many).len(), MAX_BUTTONS);
    assert!(
        sub_title(&many).ends_with("… 19 more buttons not shown; reply in the thread instead.")
    );
    assert_json_snapshot!("question_more_options_than_buttons", many);

    // A person other than the turn's author is shown by id.
    let mut s = Story::asking_where_to_post();
    s.answer_as("call_q", "ib_q", "#deploys", Actor::new("wm_7f3a"));
    let card = question_of(&s.view(), "ib_q");
    assert!(sub_title(&card).starts_with("💬 Answered by wm_7f3a: #deploys"));
}

#[test]
fn a_session_notice() {
    let mut s = Story::new();
    s.switch_the_model("Model switched to anthropic:claude-sonnet-4-5 by <@wm_1> for @all");
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
    let done = run_card(&nightly_digest_run());
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

    let failed = md(&run_card(&failed_sales_digest_run()));
    assert!(failed.contains("> ❌ Failed · catch-up run"));
    assert!(failed.contains("> **Error:** the gateway is over quota"));
    assert_snapshot!("run_failed", failed);
}

#[test]
fn model_text_cannot_become_markup() {
    let hostile = "Hi @all and <@wm_1>!\n\n\
<font color=\"warning\">alarm</font> [click](javascript:alert(1)) ![img](https://e.com/x.png)\n\n\
```\n<@wm_1> `tick`\n```\n\n- item\n+ plus\n1) one\n\n# 2026. a year\n\n| <@all> | x |\n|---|---|\n| a | b |";
    let s = Story::completed_turn("Say hi", hostile);
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
    let answer = "```python\ndef f(x):\n    if x < 2:\n        return `x`\n\n    return [x]\n```\n\n\
| Service | Owner | Note |\n|---|:-:|---|\n| api | | a \\| b |\n| - | web | `x` |\n| **bold** |";
    let s = Story::completed_turn("Show me", answer);
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
    let s = Story::completed_turn("Dump the log", &long_log(800));
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
