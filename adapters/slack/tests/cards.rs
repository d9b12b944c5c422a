//! Every card state of the recorded sessions of workmate-cards' tests, as the Slack message that
//! carries it (`text` and `blocks`), snapshotted, with what each state must show asserted.

use insta::assert_snapshot;
use serde_json::{Value, json};
use workmate_cards::{ButtonAction, Card, approval_card, plan_card, question_card, turn_card};
use workmate_protocol::ApprovalChoice;
use workmate_slack::blocks::{decode_button_value, fallback_text, render};

use crate::limits::assert_within_limits;
use crate::story::{Story, answer, approval, item, stop, turn};

/// The message body for a card, checked against Slack's limits.
fn message(card: &Card) -> Value {
    let blocks = render(card);
    assert_within_limits(&blocks);
    json!({ "text": fallback_text(card), "blocks": blocks })
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

fn types(message: &Value) -> Vec<&str> {
    message["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect()
}

/// Every mrkdwn and plain text of the message, one per block, joined.
fn all_text(message: &Value) -> String {
    let mut out = Vec::new();
    for block in message["blocks"].as_array().unwrap() {
        for text in [&block["text"]["text"], &block["elements"][0]["text"]] {
            if let Some(t) = text.as_str() {
                out.push(t.to_owned());
            }
        }
    }
    out.join("\n")
}

/// `(label, action_id, style, action)` of every button.
fn buttons(message: &Value) -> Vec<(String, String, Option<String>, ButtonAction)> {
    message["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap().clone())
        .map(|e| {
            (
                e["text"]["text"].as_str().unwrap().to_owned(),
                e["action_id"].as_str().unwrap().to_owned(),
                e["style"].as_str().map(str::to_owned),
                decode_button_value(e["value"].as_str().unwrap()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_tool_turn_with_an_approval() {
    let mut s = Story::asking_which_deploys_failed();
    let thinking = message(&turn_card(&s.view().turns()[0]));
    assert_eq!(types(&thinking), ["context", "actions"]);
    assert_eq!(thinking["text"], "🤔 Thinking…");
    assert_eq!(
        buttons(&thinking),
        [("Stop".into(), "wm:0".into(), Some("danger".into()), stop())]
    );
    assert_snapshot!("turn_thinking", pretty(&thinking));

    s.reason_then_stream_a_reply();
    let streaming = message(&turn_card(&s.view().turns()[0]));
    assert_eq!(types(&streaming), ["context", "section", "actions"]);
    assert_snapshot!("turn_reasoning_streaming", pretty(&streaming));
    s.check_the_ci_runs("call_1", "ib_1");
    let view = s.view();
    let waiting = message(&turn_card(&view.turns()[0]));
    assert!(all_text(&waiting).contains("⏸️ Waiting for approval"));
    assert_snapshot!("turn_waiting_for_approval", pretty(&waiting));

    let pending = message(&approval_card(view.approval(&item("ib_1")).unwrap()));
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        buttons(&pending),
        [
            (
                "Approve once".into(),
                "wm:0".into(),
                some("primary"),
                approval("ib_1", ApprovalChoice::Once)
            ),
            (
                "Always allow command".into(),
                "wm:1".into(),
                None,
                approval("ib_1", ApprovalChoice::AlwaysCommand)
            ),
            (
                "Allow read-only".into(),
                "wm:2".into(),
                None,
                approval("ib_1", ApprovalChoice::ReadonlySession)
            ),
            (
                "Deny".into(),
                "wm:3".into(),
                some("danger"),
                approval("ib_1", ApprovalChoice::Deny)
            ),
        ]
    );
    assert!(
        all_text(&pending).contains(
            "```\ngh run list --status failure --created '&gt;=2026-01-04' --limit 20\n```"
        )
    );
    assert_snapshot!("approval_run_shell_pending", pretty(&pending));

    s.approve_once_as_bob("call_1", "ib_1");
    let view = s.view();
    let continued = message(&turn_card(view.turn_segment(&turn("tn_1"), 0).unwrap()));
    assert!(all_text(&continued).ends_with("↓ Continued below"));
    assert!(buttons(&continued).is_empty());
    assert_snapshot!("turn_continued_below", pretty(&continued));
    let approved = message(&approval_card(view.approval(&item("ib_1")).unwrap()));
    assert!(buttons(&approved).is_empty(), "no buttons after resolution");
    assert!(all_text(&approved).contains("✅ Approved by Bob Li · once"));
    assert_snapshot!("approval_run_shell_approved", pretty(&approved));

    s.run("call_1", "run_shell");
    let running = message(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(all_text(&running).contains("⚙️ Running `run_shell`…"));
    assert_eq!(
        buttons(&running).len(),
        1,
        "the newest segment can stop the turn"
    );
    assert_snapshot!("turn_running_tool", pretty(&running));

    s.find_two_failed_runs_then_fall_back("call_1");
    s.answer_with_the_failed_deploys();
    let done = message(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(
        buttons(&done).is_empty(),
        "an ended turn has no Stop button"
    );
    let text = all_text(&done);
    assert_eq!(done["blocks"][2]["type"], "header");
    assert_eq!(done["blocks"][2]["text"]["text"], "Failed deploys");
    for expected in [
        "Two deploys *failed* since yesterday:",
        "1. `api` #4812 timed out\n2. `web` #977 failed _lint_\n   • see <https://ci.example.com/runs/977|the run>",
        "```\nService | Run  | Cause\n--------+------+--------\napi     | 4812 | timeout\nweb     | 977  | lint\n```",
        "```\ngh run rerun 4812\n```",
        "> Both are on `main`.",
        "I posted the summary to ~#deploys~ #ops.",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert!(types(&done).contains(&"divider"));
    assert_snapshot!("turn_done_markdown", pretty(&done));
}

#[test]
fn a_denied_write_then_a_failed_turn() {
    let mut s = Story::asking_to_write_release_notes();
    let pending = message(&approval_card(s.view().approval(&item("ib_w")).unwrap()));
    assert_eq!(buttons(&pending).len(), 3);
    assert!(all_text(&pending).contains("… 5 more lines not shown"));
    assert_snapshot!("approval_write_file_pending", pretty(&pending));

    s.deny_as_bob("call_w", "ib_w", "write_file");
    let denied = message(&approval_card(s.view().approval(&item("ib_w")).unwrap()));
    assert!(buttons(&denied).is_empty());
    assert!(all_text(&denied).contains("❌ Denied by Bob Li"));
    assert_snapshot!("approval_write_file_denied", pretty(&denied));

    s.fail_rate_limited();
    let failed = message(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(buttons(&failed).is_empty());
    assert!(all_text(&failed).starts_with("❌ Failed: The model gateway"));
    assert!(all_text(&failed).contains("⛔ `write_file`"));
    assert_snapshot!("turn_failed", pretty(&failed));
}

#[test]
fn an_edit_waits_then_the_turn_is_stopped() {
    let mut s = Story::asking_to_raise_the_timeout();
    let pending = message(&approval_card(s.view().approval(&item("ib_r")).unwrap()));
    assert!(
        all_text(&pending)
            .contains("```\n-timeout: 10m\n-retries: 1\n+timeout: 20m\n+retries: 2\n```")
    );
    assert_snapshot!("approval_replace_in_file_pending", pretty(&pending));

    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let stopped = message(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(buttons(&stopped).is_empty());
    assert!(all_text(&stopped).starts_with("⏹️ Stopped"));
    assert_snapshot!("turn_stopped", pretty(&stopped));
}

#[test]
fn a_question_offers_its_options_and_shows_the_answer() {
    let mut s = Story::asking_where_to_post();
    let pending = message(&question_card(s.view().question(&item("ib_q")).unwrap()));
    assert_eq!(
        buttons(&pending),
        [
            (
                "#ops".into(),
                "wm:0".into(),
                Some("primary".into()),
                answer("ib_q", "#ops")
            ),
            (
                "#deploys".into(),
                "wm:1".into(),
                None,
                answer("ib_q", "#deploys")
            ),
        ]
    );
    assert!(all_text(&pending).contains("Or reply in the thread to answer."));
    assert_snapshot!("question_pending", pretty(&pending));

    s.answer("call_q", "ib_q", "#ops");
    let answered = message(&question_card(s.view().question(&item("ib_q")).unwrap()));
    assert!(buttons(&answered).is_empty());
    assert!(all_text(&answered).contains("💬 Answered by Alice Chen: #ops"));
    assert_snapshot!("question_answered", pretty(&answered));
}

#[test]
fn a_plan_offers_approve_auto_and_reject_with_its_reply_token() {
    let s = Story::proposing_a_plan();
    let pending = message(&plan_card(s.view().plan(&item("ib_p")).unwrap()));
    let labels: Vec<String> = buttons(&pending).into_iter().map(|b| b.0).collect();
    assert_eq!(labels, ["Approve", "Approve in auto mode", "Reject"]);
    let text = all_text(&pending);
    assert!(text.contains("Write the `/healthz` handler"), "{text}");
    assert!(text.contains("[wm:ib_p]"), "{text}");
}
