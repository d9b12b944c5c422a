//! The DingTalk card data: the approval template's variables for every approval state, the choice
//! every documented click payload carries, the answer card's markdown for turn states, and the
//! shipped template agreeing with the code.

use insta::{assert_json_snapshot, assert_snapshot};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use workmate_cards::testing::{
    Story, any_text_in_every_block, item, long_log, other_resolutions, turn,
};
use workmate_cards::{Block, Card, SessionView, turn_card};
use workmate_dingtalk::card::{
    approval_param_map, callback_choice, click_choice, markdown, out_track_id,
};
use workmate_protocol::{ApprovalChoice, InboxItemId};

const KEYS: [&str; 6] = [
    "status",
    "title",
    "detail",
    "requester",
    "approver",
    "choices",
];

/// DingTalk's limit on a card's data.
const MAX_CARD_BYTES: usize = 30 * 1024;

/// Every choice a button can carry, by wire name.
const CHOICES: [ApprovalChoice; 6] = [
    ApprovalChoice::Once,
    ApprovalChoice::AlwaysTool,
    ApprovalChoice::AlwaysCommand,
    ApprovalChoice::ReadonlySession,
    ApprovalChoice::AlwaysTask,
    ApprovalChoice::Deny,
];

/// The param map of approval `id`, checked against the contract: exactly the six variables,
/// every value a string, `choices` a JSON array of the card's offered choices, no approver while
/// pending.
fn params(view: &SessionView, id: &str) -> Value {
    let card = view.approval(&item(id)).unwrap();
    let map: Map<String, Value> = approval_param_map(card);
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    assert_eq!(keys, KEYS);
    assert!(map.values().all(Value::is_string), "{map:?}");
    let choices: Vec<String> = serde_json::from_str(map["choices"].as_str().unwrap()).unwrap();
    let offered: Vec<&str> = card.choices.iter().map(|c| c.as_str()).collect();
    assert_eq!(choices, offered);
    let bytes = Value::Object(map.clone()).to_string().len();
    assert!(bytes <= MAX_CARD_BYTES, "{bytes} bytes");
    if map["status"] == "pending" {
        assert_eq!(map["approver"], "");
    }
    Value::Object(map)
}

fn status(p: &Value) -> &str {
    p["status"].as_str().unwrap()
}

fn detail(p: &Value) -> &str {
    p["detail"].as_str().unwrap()
}

#[test]
fn a_shell_command_pending_then_approved_once() {
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    let pending = params(&s.view(), "ib_1");
    assert_eq!(status(&pending), "pending");
    assert_eq!(pending["title"], "Run run_shell?");
    assert_eq!(pending["requester"], "Alice Chen");
    assert_eq!(
        pending["choices"],
        r#"["once","always_command","readonly_session","deny"]"#
    );
    let text = detail(&pending);
    assert!(
        text.contains(
            "```sh\ngh run list --status failure --created '>=2026-01-04' --limit 20\n```"
        )
    );
    assert!(text.contains("**Risk**: Read-only command"), "{text}");
    assert!(
        !text.contains("Approve once"),
        "buttons belong to the template"
    );
    assert_json_snapshot!("approval_run_shell_pending", pending);

    s.approve_once_as_bob("call_1", "ib_1");
    let approved = params(&s.view(), "ib_1");
    assert_eq!(status(&approved), "approved");
    assert_eq!(approved["approver"], "Bob Li");
    assert_eq!(approved["detail"], pending["detail"], "the content stays");
    assert_json_snapshot!("approval_run_shell_approved_once", approved);
}

#[test]
fn a_write_pending_then_denied() {
    let mut s = Story::asking_to_write_release_notes();
    let pending = params(&s.view(), "ib_w");
    assert_eq!(pending["choices"], r#"["once","always_tool","deny"]"#);
    assert!(detail(&pending).contains("```md\n- change 1\n"));
    assert_json_snapshot!("approval_write_file_pending", pending);

    s.deny_as_bob("call_w", "ib_w", "write_file");
    let denied = params(&s.view(), "ib_w");
    assert_eq!(status(&denied), "denied");
    assert_eq!(denied["approver"], "Bob Li");
    assert_json_snapshot!("approval_write_file_denied", denied);
}

#[test]
fn an_edit_pending_then_closed_by_stopping_the_turn() {
    let mut s = Story::asking_to_raise_the_timeout();
    let pending = params(&s.view(), "ib_r");
    assert!(detail(&pending).contains("```diff\n-timeout: 10m\n-retries: 1\n+timeout: 20m"));
    assert_json_snapshot!("approval_replace_in_file_pending", pending);

    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let expired = params(&s.view(), "ib_r");
    assert_eq!(status(&expired), "expired");
    assert_eq!(expired["approver"], "", "nobody decided");
    assert!(detail(&expired).ends_with("> Closed: the turn was stopped"));
    assert_json_snapshot!("approval_replace_in_file_expired", expired);
}

#[test]
fn a_patch_and_an_unknown_tool_show_their_arguments() {
    let view = Story::asking_with_long_arguments().view();
    let patch = params(&view, "ib_p");
    assert!(detail(&patch).contains("… 54 more lines not shown"));
    assert_json_snapshot!("approval_apply_patch_pending", patch);

    let other = params(&view, "ib_j");
    assert!(detail(&other).contains("```json\n{\n  \"channel\": \"#ops\""));
    assert_eq!(other["choices"], r#"["once","always_task","deny"]"#);
    assert_json_snapshot!("approval_json_pending", other);
}

#[test]
fn an_automation_prompt_names_its_standing_target() {
    let mut s = Story::with_turn("Post the nightly digest");
    s.ask_to_post_the_nightly_digest("call_t", "ib_t");
    let pending = params(&s.view(), "ib_t");
    let text = detail(&pending);
    assert!(text.contains("**Target**: #ops"), "{text}");
    assert!(text.contains("> Why: posting to a channel needs approval"));
    assert_json_snapshot!("approval_standing_target_pending", pending);
}

#[test]
fn every_approval_scope_is_approved_by_its_approver() {
    for (resolution, _, name) in other_resolutions() {
        let s = Story::failed_runs_resolved_by_bob(resolution);
        let p = params(&s.view(), "ib_1");
        assert_eq!(status(&p), "approved", "{name}");
        assert_eq!(p["approver"], "Bob Li", "{name}");
        assert_json_snapshot!(name, p);
    }
}

#[test]
fn every_documented_click_payload_carries_its_choice() {
    for choice in CHOICES {
        let c = choice.as_str();
        let shapes = [
            json!({ "cardPrivateData": { "actionIds": [c], "params": { "action": c } } }),
            json!({ "cardPrivateData": { "params": { "action": c } } }),
            json!({ "value": "x", "params": { "action": c } }),
            json!({ "userPrivateData": { "params": { "action": c } } }),
            json!({ "actionData": { "cardPrivateData": { "params": { "action": c } } } }),
            json!({ "cardPrivateData": { "actionIds": [c], "params": {} } }),
            json!({ "actionId": c }),
        ];
        for content in shapes {
            assert_eq!(
                click_choice(&content.to_string()),
                Some(choice),
                "{content}"
            );
        }
    }
    let documented = r#"{"cardPrivateData":{"actionIds":["deny"],"params":{"action":"deny"}}}"#;
    let callback = json!({
        "type": "actionCallback", "outTrackId": "approval_ib_1", "corpId": "ding1",
        "userId": "manager1", "content": documented,
    });
    assert_eq!(callback_choice(&callback), Some(ApprovalChoice::Deny));
    let parsed = json!({ "content": { "params": { "action": "once" } } });
    assert_eq!(callback_choice(&parsed), Some(ApprovalChoice::Once));
    let raw = json!({ "type": "actionCallback", "actionId": "always_tool", "content": "{}" });
    assert_eq!(callback_choice(&raw), Some(ApprovalChoice::AlwaysTool));
}

#[test]
fn a_click_without_a_known_choice_is_none() {
    for content in [
        "",
        "not json",
        "[]",
        "{}",
        r#"{"cardPrivateData":{"params":{"action":"approve"}}}"#,
        r#"{"cardPrivateData":{"params":{"action":"ONCE"}}}"#,
        r#"{"cardPrivateData":{"params":{"action":1}}}"#,
        r#"{"params":"{\"action\":\"once\"}"}"#,
        r#"{"cardPrivateData":{"actionIds":[]}}"#,
    ] {
        assert_eq!(click_choice(content), None, "{content}");
    }
    assert_eq!(callback_choice(&json!({ "content": 5 })), None);
    let unknown_first =
        r#"{"cardPrivateData":{"params":{"action":"maybe"}},"params":{"action":"deny"}}"#;
    assert_eq!(
        click_choice(unknown_first),
        Some(ApprovalChoice::Deny),
        "an unknown word in one place does not hide a choice in the next"
    );
}

#[test]
fn out_track_ids_are_stable_per_item() {
    assert_eq!(out_track_id(&item("ib_1")), "approval_ib_1");
    let uuid = InboxItemId::from("0199a3b2-7c4e-7d10-9f3a-1b2c3d4e5f60");
    assert_eq!(
        out_track_id(&uuid),
        "approval_0199a3b2-7c4e-7d10-9f3a-1b2c3d4e5f60"
    );
    assert_ne!(out_track_id(&item("ib_1")), out_track_id(&item("ib_2")));
    let odd = item("a/b c");
    let hashed = out_track_id(&odd);
    assert_eq!(hashed, out_track_id(&odd));
    assert_eq!(hashed.len(), "approval_".len() + 64);
    assert!(
        hashed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    );
    assert_ne!(
        out_track_id(&item(&"x".repeat(49))),
        format!("approval_{}", "x".repeat(49))
    );
}

/// The markdown of turn `tn_1`'s first segment.
fn turn_md(view: &SessionView) -> String {
    markdown(&turn_card(view.turn_segment(&turn("tn_1"), 0).unwrap()))
}

#[test]
fn turn_states_as_answer_markdown() {
    let mut s = Story::asking_which_deploys_failed();
    assert_eq!(
        turn_md(&s.view()),
        "> 🤔 Thinking…",
        "no Stop button in markdown"
    );
    s.reason_then_stream_a_reply();
    let streaming = turn_md(&s.view());
    assert!(streaming.ends_with("Let me check the CI runs."));
    assert_snapshot!("turn_reasoning_streaming", streaming);
    s.check_the_ci_runs("call_1", "ib_1");
    assert_snapshot!("turn_waiting_for_approval", turn_md(&s.view()));
    s.approve_once_as_bob("call_1", "ib_1");
    assert_snapshot!("turn_continued_below", turn_md(&s.view()));
    s.find_two_failed_runs_then_fall_back("call_1");
    s.answer_with_the_failed_deploys();
    let done = markdown(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert_snapshot!("turn_done", done);

    let mut s = Story::asking_to_write_release_notes();
    s.deny_as_bob("call_w", "ib_w", "write_file");
    s.fail_rate_limited();
    let failed = markdown(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(failed.contains("❌ Failed"));
    assert_snapshot!("turn_failed", failed);

    let mut s = Story::asking_to_raise_the_timeout();
    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let stopped = markdown(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert!(stopped.contains("Stopped by Alice Chen"));
    assert_snapshot!("turn_stopped", stopped);

    let every = markdown(&turn_card(
        &Story::trying_every_step_outcome().view().turns()[0],
    ));
    assert_snapshot!("turn_every_step_outcome", every);
}

#[test]
fn model_text_cannot_become_markup() {
    let hostile = "Hi <b>there</b> <img src=x onerror=alert(1)>\n\n\
[click](javascript:alert(1)) ![img](https://e.com/x.png)\n\n\
# heading <u>u</u>\n\n- item\n+ plus\n1) one\n\n| a | b |\n|---|---|\n| <i>x</i> | y |";
    let s = Story::completed_turn("Say hi", hostile);
    let text = markdown(&turn_card(&s.view().turns()[0]));
    assert!(
        !text.contains("<b>") && !text.contains("<img") && !text.contains("<i>"),
        "{text}"
    );
    assert!(!text.contains("](javascript:"), "{text}");
    assert!(!text.contains("!["), "{text}");
    assert_snapshot!("turn_done_markup_escaped", text);
}

#[test]
fn code_cannot_close_its_fence() {
    let card = Card {
        blocks: vec![Block::Code {
            language: Some("sh; <x>".into()),
            text: "line\n`````\n<script>\n".into(),
        }],
    };
    assert_eq!(markdown(&card), "``````\nline\n`````\n<script>\n``````");
    let card = Card {
        blocks: vec![Block::Code {
            language: Some("rust".into()),
            text: "a`b".into(),
        }],
    };
    assert_eq!(markdown(&card), "```rust\na`b\n```");
}

#[test]
fn a_long_answer_renders() {
    let s = Story::completed_turn("Dump the log", &long_log(300));
    let text = markdown(&turn_card(&s.view().turns()[0]));
    assert!(
        text.contains("Line 0300"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
}

#[test]
fn the_template_matches_the_contract() {
    let template: Value = serde_json::from_str(include_str!("../templates/approval.json")).unwrap();
    let variables: Vec<&str> = template["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(variables[..KEYS.len()], KEYS, "the shared variables");
    assert_eq!(
        variables[KEYS.len()..],
        ["click_key"],
        "and the private one"
    );
    let statuses = &template["variables"][0]["values"];
    assert_eq!(
        *statuses,
        json!(["pending", "approved", "denied", "expired"])
    );
    let buttons = template["components"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|c| c["buttons"].as_array())
        .unwrap();
    assert_eq!(buttons.len(), CHOICES.len(), "one button per choice");
    for (button, choice) in buttons.iter().zip(CHOICES) {
        let word = choice.as_str();
        assert_eq!(button["actionId"], word);
        assert_eq!(
            button["params"],
            json!({ "action": word, "click_key": "${click_key}" }),
            "the action, and the clicker's own key"
        );
        let clicked =
            json!({ "cardPrivateData": { "actionIds": [word], "params": button["params"] } });
        assert_eq!(click_choice(&clicked.to_string()), Some(choice));
        let visible = button["visible"]["conditions"].to_string();
        assert!(visible.contains(r#""variable":"status""#) && visible.contains(r#""pending""#));
        assert!(visible.contains(r#""variable":"choices""#), "{visible}");
    }
}

/// The lines of `text` outside fenced code blocks (where `<` is shown as it is).
fn outside_code(text: &str) -> String {
    let mut fence: Option<String> = None;
    let mut out = String::new();
    for line in text.lines() {
        let ticks: String = line.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(open) if line == open.as_str() => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

proptest! {
    #[test]
    fn any_text_renders_without_markup_or_panic(
        short in "\\PC{0,20}", md in "[`*_<>#|\\[\\]()!~\\\\ a-z\n-]{0,60}", long in "\\PC{0,200}",
    ) {
        let text = markdown(&any_text_in_every_block(&short, &md, &long));
        let outside = outside_code(&text);
        prop_assert!(!outside.contains('<'), "{}", text);
        let s = Story::completed_turn("Go", &format!("{short}\n{md}\n{long}"));
        let _ = markdown(&turn_card(&s.view().turns()[0]));
    }

    #[test]
    fn every_param_value_is_a_string(reason in "\\PC{0,40}", name in "\\PC{0,20}") {
        let mut s = Story::asking_to_raise_the_timeout();
        s.stop_while_waiting("call_r", "ib_r", &name);
        let mut card = s.view().approval(&item("ib_r")).unwrap().clone();
        card.reason = reason;
        let map = approval_param_map(&card);
        prop_assert!(map.values().all(Value::is_string));
        let choices: Result<Vec<String>, _> = serde_json::from_str(map["choices"].as_str().unwrap_or(""));
        prop_assert!(choices.is_ok());
    }

    #[test]
    fn any_click_content_decodes_without_panic(content in "\\PC{0,80}") {
        let _ = click_choice(&content);
    }
}
