//! Every card state of workmate-cards, as the Card JSON 2.0 the Feishu adapter sends: snapshotted
//! one per state, each checked against Feishu's limits, with what each state must show asserted
//! beside its snapshot.

use insta::assert_json_snapshot;
use serde_json::{Value, json};
use workmate_cards::testing::{
    RATE_LIMITED, Story, actions, answer, approval, failed_sales_digest_run, item, long_log,
    nightly_digest_run, option, other_resolutions, stop, turn,
};
use workmate_cards::{
    ButtonAction, Card, approval_card, notice_card, plan_card, question_card, run_card, turn_card,
};
use workmate_feishu::card::{MAX_BUTTONS, MAX_TABLES, decode_action, plain_text, render};
use workmate_protocol::{Actor, ApprovalChoice};

use crate::limits::{assert_header_iff_titled, assert_within_limits};

/// The card as Feishu gets it, checked against its limits, with a header exactly when it has a
/// title; every button of the card is carried, in order, with its action as its callback value.
fn feishu(card: &Card) -> Value {
    let json = render(card);
    assert_within_limits(&json);
    assert_header_iff_titled(card, &json);
    let actions = actions(card);
    let carried: Vec<ButtonAction> = buttons(&json).into_iter().map(|b| b.2).collect();
    if actions.len() <= MAX_BUTTONS {
        assert_eq!(carried, actions);
    }
    json
}

/// `(label, type, action)` of every button, in order.
fn buttons(card: &Value) -> Vec<(String, String, ButtonAction)> {
    elements(card)
        .iter()
        .filter(|e| e["tag"] == "column_set")
        .flat_map(|row| row["columns"].as_array().unwrap().clone())
        .flat_map(|column| column["elements"].as_array().unwrap().clone())
        .map(|b| {
            (
                b["text"]["content"].as_str().unwrap().to_owned(),
                b["type"].as_str().unwrap().to_owned(),
                decode_action(&b["behaviors"][0]["value"]).unwrap(),
            )
        })
        .collect()
}

fn elements(card: &Value) -> &Vec<Value> {
    card["body"]["elements"].as_array().unwrap()
}

/// The tag of every body element.
fn tags(card: &Value) -> Vec<&str> {
    elements(card)
        .iter()
        .map(|e| e["tag"].as_str().unwrap())
        .collect()
}

/// Every markdown content of the card, one per line.
fn texts(card: &Value) -> String {
    elements(card)
        .iter()
        .filter_map(|e| e["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn streaming(card: &Value) -> bool {
    card["config"]["streaming_mode"].as_bool().unwrap()
}

fn button(label: &str, kind: &str, action: ButtonAction) -> (String, String, ButtonAction) {
    (label.to_owned(), kind.to_owned(), action)
}

#[test]
fn a_tool_turn_with_an_approval() {
    let mut s = Story::asking_which_deploys_failed();
    let thinking = feishu(&turn_card(&s.view().turns()[0]));
    assert_eq!(tags(&thinking), ["markdown", "column_set"]);
    assert!(thinking.get("header").is_none(), "a turn card has no title");
    assert!(streaming(&thinking));
    assert_eq!(thinking["config"]["summary"]["content"], "🤔 Thinking…");
    assert_eq!(buttons(&thinking), [button("Stop", "danger", stop())]);
    assert_json_snapshot!("turn_thinking", thinking);

    s.reason_then_stream_a_reply();
    let streamed = feishu(&turn_card(&s.view().turns()[0]));
    assert!(texts(&streamed).contains("💭 Reasoning…"));
    assert!(texts(&streamed).contains("Let me check the CI runs."));
    assert!(streaming(&streamed));
    assert_json_snapshot!("turn_reasoning_streaming", streamed);

    s.check_the_ci_runs("call_1", "ib_1");
    let view = s.view();
    let waiting = feishu(&turn_card(&view.turns()[0]));
    assert!(texts(&waiting).contains("⏸️ Waiting for approval"));
    assert_json_snapshot!("turn_waiting_for_approval", waiting);

    let pending = feishu(&approval_card(view.approval(&item("ib_1")).unwrap()));
    assert!(!streaming(&pending), "only a running turn streams");
    assert_eq!(
        buttons(&pending),
        [
            button(
                "Approve once",
                "primary_filled",
                approval("ib_1", ApprovalChoice::Once)
            ),
            button(
                "Always allow command",
                "default",
                approval("ib_1", ApprovalChoice::AlwaysCommand)
            ),
            button(
                "Allow read-only",
                "default",
                approval("ib_1", ApprovalChoice::ReadonlySession)
            ),
            button("Deny", "danger", approval("ib_1", ApprovalChoice::Deny)),
        ]
    );
    let row = elements(&pending)
        .iter()
        .find(|e| e["tag"] == "column_set")
        .unwrap();
    assert_eq!(
        row["columns"][0]["elements"][0]["behaviors"][0]["value"],
        json!({
            "type": "resolve",
            "item_id": "ib_1",
            "resolution": { "type": "approval", "choice": "once" }
        }),
        "the value carries the item and the choice, nothing else"
    );
    let text = texts(&pending);
    assert!(
        text.contains(
            "```sh\ngh run list --status failure --created '>=2026-01-04' --limit 20\n```"
        )
    );
    assert!(text.contains("**Requested by**: Alice Chen"));
    assert_json_snapshot!("approval_run_shell_pending", pending);

    s.approve_once_as_bob("call_1", "ib_1");
    let view = s.view();
    let continued = feishu(&turn_card(view.turn_segment(&turn("tn_1"), 0).unwrap()));
    assert!(texts(&continued).ends_with("↓ Continued below</font>"));
    assert!(buttons(&continued).is_empty());
    assert!(!streaming(&continued), "a continued segment never changes");
    assert_json_snapshot!("turn_continued_below", continued);
    let approved = feishu(&approval_card(view.approval(&item("ib_1")).unwrap()));
    assert!(buttons(&approved).is_empty(), "no buttons after resolution");
    assert!(texts(&approved).contains("✅ Approved by Bob Li · once"));
    assert_json_snapshot!("approval_run_shell_approved", approved);

    s.run("call_1", "run_shell");
    let running = feishu(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(texts(&running).contains("⚙️ Running `run_shell`…"));
    assert_eq!(buttons(&running), [button("Stop", "danger", stop())]);
    assert_json_snapshot!("turn_running_tool", running);

    s.find_two_failed_runs_then_fall_back("call_1");
    s.answer_with_the_failed_deploys();
    let done = feishu(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(
        buttons(&done).is_empty(),
        "an ended turn has no Stop button"
    );
    assert!(!streaming(&done));
    assert!(tags(&done).contains(&"table") && tags(&done).contains(&"hr"));
    assert_eq!(elements(&done)[2]["text_size"], "heading");
    let text = texts(&done);
    for expected in [
        "**Failed deploys**",
        "Two deploys **failed** since yesterday:",
        "1. `api` &#35;4812 timed out\n2. `web` &#35;977 failed *lint*",
        "[the run](https://ci.example.com/runs/977)",
        "```sh\ngh run rerun 4812\n```",
        "> Both are on `main`.",
        "~~&#35;deploys~~",
        "↪ Answered by anthropic:claude-sonnet-4-5 instead of openai:gpt-5-mini",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert_json_snapshot!("turn_done_markdown", done);
}

#[test]
fn a_denied_write_then_a_failed_turn() {
    let mut s = Story::asking_to_write_release_notes();
    let pending = feishu(&approval_card(s.view().approval(&item("ib_w")).unwrap()));
    assert_eq!(buttons(&pending).len(), 3);
    let text = texts(&pending);
    assert!(text.contains("```md\n- change 1\n"));
    assert!(text.contains("… 5 more lines not shown"));
    assert_json_snapshot!("approval_write_file_pending", pending);

    s.deny_as_bob("call_w", "ib_w", "write_file");
    let denied = feishu(&approval_card(s.view().approval(&item("ib_w")).unwrap()));
    assert!(buttons(&denied).is_empty());
    assert!(texts(&denied).contains("❌ Denied by Bob Li"));
    assert_json_snapshot!("approval_write_file_denied", denied);

    s.fail_rate_limited();
    let failed = feishu(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(buttons(&failed).is_empty());
    assert!(!streaming(&failed));
    let text = texts(&failed);
    assert!(text.contains(&format!("❌ Failed: {RATE_LIMITED}")));
    assert!(text.contains("⛔ `write_file`"));
    assert_json_snapshot!("turn_failed", failed);
}

#[test]
fn an_edit_waits_then_the_turn_is_stopped() {
    let mut s = Story::asking_to_raise_the_timeout();
    let pending = feishu(&approval_card(s.view().approval(&item("ib_r")).unwrap()));
    assert!(
        texts(&pending)
            .contains("```diff\n-timeout: 10m\n-retries: 1\n+timeout: 20m\n+retries: 2\n```")
    );
    assert_json_snapshot!("approval_replace_in_file_pending", pending);

    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let view = s.view();
    let dismissed = feishu(&approval_card(view.approval(&item("ib_r")).unwrap()));
    assert!(buttons(&dismissed).is_empty());
    assert!(texts(&dismissed).contains("Dismissed: the turn was stopped"));
    assert_json_snapshot!("approval_replace_in_file_dismissed", dismissed);
    let stopped = feishu(&turn_card(view.turn(&turn("tn_1")).unwrap()));
    assert!(buttons(&stopped).is_empty());
    assert!(texts(&stopped).contains("⏹️ Stopped"));
    assert!(texts(&stopped).contains("Stopped by Alice Chen"));
    assert_json_snapshot!("turn_stopped", stopped);
}

#[test]
fn patches_and_unknown_tools_show_their_arguments() {
    let s = Story::asking_with_long_arguments();
    let view = s.view();
    let patch_card = feishu(&approval_card(view.approval(&item("ib_p")).unwrap()));
    let text = texts(&patch_card);
    assert!(text.contains("Changes `web/src/nav.ts`"));
    assert!(text.contains("… 54 more lines not shown"));
    assert_json_snapshot!("approval_apply_patch_pending", patch_card);

    let json_card = feishu(&approval_card(view.approval(&item("ib_j")).unwrap()));
    assert!(texts(&json_card).contains("```json\n{\n  \"channel\": \"#ops\""));
    assert!(texts(&json_card).contains("Arguments cut at 2,000 characters"));
    assert!(buttons(&json_card).contains(&button(
        "Always in automation",
        "default",
        approval("ib_j", ApprovalChoice::AlwaysTask)
    )));
    assert_json_snapshot!("approval_json_pending", json_card);
}

#[test]
fn an_automation_prompt_names_its_standing_target() {
    let mut s = Story::with_turn("Post the nightly digest");
    s.ask_to_post_the_nightly_digest("call_t", "ib_t");
    let pending = feishu(&approval_card(s.view().approval(&item("ib_t")).unwrap()));
    let text = texts(&pending);
    assert!(text.contains("**Target**: &#35;ops"));
    assert!(text.contains("**Category**: messaging"));
    assert!(text.contains("Why: posting to a channel needs approval"));
    assert_json_snapshot!("approval_standing_target_pending", pending);
}

#[test]
fn every_approval_scope_names_who_approved_it() {
    for (resolution, line, name) in other_resolutions() {
        let s = Story::failed_runs_resolved_by_bob(resolution);
        let card = feishu(&approval_card(s.view().approval(&item("ib_1")).unwrap()));
        assert!(buttons(&card).is_empty(), "no buttons after resolution");
        assert!(texts(&card).contains(line), "{name}");
        assert_json_snapshot!(name, card);
    }
}

#[test]
fn turns_waiting_for_an_answer_at_the_cap_and_with_notes() {
    let s = Story::asking_where_to_post();
    let waiting = feishu(&turn_card(&s.view().turns()[0]));
    assert!(texts(&waiting).contains("❓ Waiting for an answer"));
    assert!(streaming(&waiting));
    assert_json_snapshot!("turn_waiting_for_answer", waiting);

    let s = Story::failing_until_the_step_limit();
    let capped = feishu(&turn_card(&s.view().turns()[0]));
    assert!(texts(&capped).contains("⚠️ Stopped at the step limit"));
    assert!(texts(&capped).contains("- ✗ `read_file` a.txt *— 'a.txt' does not exist*"));
    assert_json_snapshot!("turn_max_iterations", capped);

    let s = Story::summarizing_the_incident();
    let noted = feishu(&turn_card(&s.view().turns()[0]));
    let text = texts(&noted);
    assert!(text.contains("Earlier messages were summarized to save room."));
    assert!(text.contains("Mode changed from interactive to auto by Bob Li"));
    assert_json_snapshot!("turn_done_with_notes", noted);
}

#[test]
fn every_step_outcome_has_its_mark() {
    let s = Story::trying_every_step_outcome();
    let card = feishu(&turn_card(&s.view().turns()[0]));
    let text = texts(&card);
    for mark in [
        "✓ `read_file`",
        "✗ `fetch_url`",
        "⛔ `write_file`",
        "⏹ `run_shell`",
    ] {
        assert!(text.contains(mark), "missing {mark} in\n{text}");
    }
    assert!(text.contains("⏳ `search_code`") && text.contains("⏸ `apply_patch`"));
    assert_json_snapshot!("turn_every_step_outcome", card);
}

#[test]
fn questions_offer_their_options_and_show_the_answer() {
    let mut s = Story::asking_where_to_post();
    let pending = feishu(&question_card(s.view().question(&item("ib_q")).unwrap()));
    assert_eq!(
        buttons(&pending),
        [
            button("#ops", "primary_filled", answer("ib_q", "#ops")),
            button("#deploys", "default", answer("ib_q", "#deploys")),
        ]
    );
    let text = texts(&pending);
    assert!(text.contains("**&#35;ops** (recommended) — The channel you named"));
    assert!(text.contains("Or reply in the thread to answer."));
    assert_json_snapshot!("question_pending", pending);

    s.answer("call_q", "ib_q", "#ops");
    let answered = feishu(&question_card(s.view().question(&item("ib_q")).unwrap()));
    assert!(buttons(&answered).is_empty());
    assert!(texts(&answered).contains("💬 Answered by Alice Chen: &#35;ops"));
    assert_json_snapshot!("question_answered", answered);

    let open = Story::asking_which_channels(Vec::new(), true, false);
    let open = feishu(&question_card(open.view().question(&item("ib_q")).unwrap()));
    assert!(buttons(&open).is_empty());
    assert!(texts(&open).contains("Reply in the thread to answer."));
    assert_json_snapshot!("question_free_text_pending", open);

    let multi = Story::asking_which_channels(vec![option("#ops"), option("#deploys")], false, true);
    let multi = feishu(&question_card(
        multi.view().question(&item("ib_q")).unwrap(),
    ));
    assert_eq!(buttons(&multi).len(), 2);
    assert!(texts(&multi).contains("To choose several, reply in the thread."));
    assert_json_snapshot!("question_multi_pending", multi);

    let mut dismissed = Story::asking_which_channels(vec![option("#ops")], false, false);
    dismissed.dismiss_with_the_session("call_q", "ib_q");
    let dismissed = feishu(&question_card(
        dismissed.view().question(&item("ib_q")).unwrap(),
    ));
    assert!(buttons(&dismissed).is_empty());
    assert!(texts(&dismissed).contains("Dismissed: the session was deleted"));
    assert_json_snapshot!("question_dismissed", dismissed);
}

#[test]
fn a_grouped_question_asks_for_a_reply() {
    let s = Story::asking_for_a_release_plan();
    let card = feishu(&question_card(s.view().question(&item("ib_g")).unwrap()));
    assert!(buttons(&card).is_empty(), "one click cannot answer a form");
    let text = texts(&card);
    assert!(text.contains("**Which day?**") && text.contains("**Who runs it?**"));
    assert!(text.contains("Reply in the thread to answer."));
    assert_json_snapshot!("question_grouped_pending", card);
}

#[test]
fn a_question_with_more_options_than_buttons_says_so() {
    let options = (1..=25).map(|i| option(&format!("option {i}"))).collect();
    let s = Story::asking_which_channels(options, true, false);
    let card = feishu(&question_card(s.view().question(&item("ib_q")).unwrap()));
    assert_eq!(buttons(&card).len(), MAX_BUTTONS);
    assert!(texts(&card).contains("… 5 more buttons not shown; reply in the thread instead."));
    assert_json_snapshot!("question_more_options_than_buttons", card);
}

#[test]
fn a_session_notice() {
    let mut s = Story::new();
    s.switch_the_model("Model switched to anthropic:claude-sonnet-4-5 by <at id=all></at>");
    let view = s.view();
    let card = feishu(&notice_card(&view.notices()[0]));
    assert_eq!(tags(&card), ["markdown"]);
    assert!(texts(&card).contains("&#60;at id=all&#62;&#60;/at&#62;"));
    assert_json_snapshot!("notice", card);
}

#[test]
fn automation_runs_have_a_titled_card() {
    let done = run_card(&nightly_digest_run());
    let done_json = feishu(&done);
    assert_eq!(done_json["header"]["title"]["content"], "⏰ Nightly digest");
    assert_eq!(
        done_json["header"]["title"]["tag"], "plain_text",
        "a card that starts with a heading has a header"
    );
    assert!(texts(&done_json).contains("✅ Done · scheduled run · took 1 min 15 s"));
    assert!(plain_text(&done).starts_with("⏰ Nightly digest\n✅ Done"));
    assert_json_snapshot!("run_done", done_json);

    let failed = feishu(&run_card(&failed_sales_digest_run()));
    let text = texts(&failed);
    assert!(text.contains("❌ Failed · catch-up run"));
    assert!(text.contains("> **Error:** the gateway is over quota"));
    assert_json_snapshot!("run_failed", failed);
}

#[test]
fn model_text_cannot_become_markup() {
    let hostile = "Hi <at id=all></at> and <at user_id=\"ou_1\">you</at>!\n\n\
<font color='red'>alarm</font> [click](javascript:alert(1)) ![img](https://e.com/x.png)\n\n\
```\n<at id=all></at>\n````\n```\n\n- item\n+ plus\n1) one\n\n| a | b |\n|---|---|\n| <at id=all> | x |";
    let s = Story::completed_turn("Say hi", hostile);
    let card = feishu(&turn_card(&s.view().turns()[0]));
    let text = texts(&card);
    assert!(!text.contains("<at"), "no mention in\n{text}");
    assert!(!text.contains("<font color='red'>"));
    assert!(!text.contains("](javascript:"));
    assert_json_snapshot!("turn_done_markup_escaped", card);
}

#[test]
fn a_long_answer_is_cut_with_a_note() {
    let s = Story::completed_turn("Dump the log", &long_log(1_200));
    let card = feishu(&turn_card(&s.view().turns()[0]));
    let text = texts(&card);
    assert!(text.contains("Line 0001"));
    assert!(!text.contains("Line 1200"));
    assert!(text.contains("more characters not shown"), "a cut says so");
    assert!(texts(&card).starts_with("<font color='grey'>✅ Done</font>"));
    assert_json_snapshot!("turn_long_answer_cut", card);
}

#[test]
fn an_answer_of_many_blocks_is_cut_with_a_note() {
    let mut s = Story::with_turn("List the services");
    s.delta(
        &(1..=150)
            .map(|i| format!("Service {i} is healthy."))
            .collect::<Vec<_>>()
            .join("\n\n"),
    );
    let card = feishu(&turn_card(&s.view().turns()[0]));
    let text = texts(&card);
    assert!(text.contains("more blocks not shown"));
    assert_eq!(tags(&card).last(), Some(&"column_set"), "Stop stays");
    assert_json_snapshot!("turn_many_blocks_cut", card);
}

#[test]
fn tables_past_the_caps_are_cut_with_notes() {
    let wide = {
        let header = (1..=12).map(|c| format!("| h{c} ")).collect::<String>();
        let rule = "|---".repeat(12);
        let rows = (1..=55)
            .map(|r| (1..=12).map(|c| format!("| {r}.{c} ")).collect::<String>() + "|")
            .collect::<Vec<_>>()
            .join("\n");
        format!("{header}|\n{rule}|\n{rows}")
    };
    let small = |i: usize| format!("| table | {i} |\n|---|---|\n| row | {i} |");
    let answer = std::iter::once(wide)
        .chain((2..=7).map(small))
        .collect::<Vec<_>>()
        .join("\n\n");
    let s = Story::completed_turn("Tabulate", &answer);
    let card = feishu(&turn_card(&s.view().turns()[0]));
    let tables: Vec<&Value> = elements(&card)
        .iter()
        .filter(|e| e["tag"] == "table")
        .collect();
    assert_eq!(tables.len(), MAX_TABLES);
    let rows = tables[0]["rows"].as_array().unwrap();
    assert_eq!(
        rows.last().unwrap()["c0"],
        "… 5 more rows and 2 more columns not shown"
    );
    assert!(
        texts(&card).contains("```\ntable | 7\nrow | 7\n```"),
        "past the cap: code"
    );
    assert_json_snapshot!("turn_tables_capped", card);
}

#[test]
fn a_question_from_an_unnamed_requester() {
    // A person other than the turn's author is shown by id.
    let mut s = Story::asking_where_to_post();
    s.answer_as("call_q", "ib_q", "#deploys", Actor::new("ou_7f3a"));
    let card = feishu(&question_card(s.view().question(&item("ib_q")).unwrap()));
    assert!(texts(&card).contains("💬 Answered by ou&#95;7f3a: &#35;deploys"));
}

#[test]
fn a_plan_offers_approve_auto_and_reject_with_its_reply_token() {
    let s = Story::proposing_a_plan();
    let card = feishu(&plan_card(s.view().plan(&item("ib_p")).unwrap()));
    let labels: Vec<String> = buttons(&card).into_iter().map(|b| b.0).collect();
    assert_eq!(labels, ["Approve", "Approve in auto mode", "Reject"]);
    // Shown as `[wm:ib_p]`: Feishu's markdown needs the brackets and the underscore escaped.
    let text = texts(&card);
    assert!(text.contains("&#91;wm:ib&#95;p&#93;"), "{text}");
}
