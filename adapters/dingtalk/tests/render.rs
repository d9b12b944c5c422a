//! What the platform renders: each card of the IR as the template it fills. The approval
//! template's variables read back from the IR agree with those built from the view in every
//! approval state (so the adapter never needs the view), and every rendering is snapshotted.

use insta::assert_json_snapshot;
use proptest::prelude::*;
use serde_json::Value;
use workmate_cards::testing::{Story, any_text_in_every_block, item, other_resolutions, turn};
use workmate_cards::{Block, Card, Inline, SessionView, approval_card, question_card, turn_card};
use workmate_dingtalk::card::{FlowStatus, Rendered, Template, approval_param_map, render};
use workmate_dingtalk::dispatch::click_inbound;

/// The rendering of approval `id`, checked against the view's variables.
fn approval(view: &SessionView, id: &str) -> Rendered {
    let card = view.approval(&item(id)).unwrap();
    let from_view = approval_param_map(card);
    let rendered = Rendered::of(&approval_card(card));
    assert_eq!(rendered.template, Template::Approval);
    let keys: Vec<&str> = rendered.params.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "status",
            "title",
            "detail",
            "requester",
            "approver",
            "choices"
        ]
    );
    for key in ["status", "title", "detail", "requester", "approver"] {
        assert_eq!(rendered.params[key], from_view[key], "{key}");
    }
    if rendered.params["status"] == "pending" {
        assert_eq!(rendered.params["choices"], from_view["choices"]);
        assert_eq!(rendered.item_id, Some(item(id)));
    } else {
        assert_eq!(
            rendered.params["choices"], "[]",
            "a decided card offers nothing"
        );
        assert_eq!(rendered.item_id, None);
    }
    assert_eq!(
        Rendered::from_value(&rendered.to_value()),
        Some(rendered.clone())
    );
    rendered
}

fn status(rendered: &Rendered) -> &str {
    rendered.params["status"].as_str().unwrap()
}

#[test]
fn every_approval_state_reads_back_from_the_ir_as_from_the_view() {
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    let pending = approval(&s.view(), "ib_1");
    assert_eq!(status(&pending), "pending");
    assert_json_snapshot!("render_approval_pending", pending.to_value());
    s.approve_once_as_bob("call_1", "ib_1");
    let approved = approval(&s.view(), "ib_1");
    assert_eq!(
        (status(&approved), approved.params["approver"].as_str()),
        ("approved", Some("Bob Li"))
    );
    assert_json_snapshot!("render_approval_approved", approved.to_value());

    let mut s = Story::asking_to_write_release_notes();
    s.deny_as_bob("call_w", "ib_w", "write_file");
    let denied = approval(&s.view(), "ib_w");
    assert_eq!(status(&denied), "denied");
    assert_json_snapshot!("render_approval_denied", denied.to_value());

    let mut s = Story::asking_to_raise_the_timeout();
    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let expired = approval(&s.view(), "ib_r");
    assert_eq!(status(&expired), "expired");
    assert_json_snapshot!("render_approval_expired", expired.to_value());

    for (resolution, line, name) in other_resolutions() {
        let s = Story::failed_runs_resolved_by_bob(resolution);
        if line.starts_with("Resolved by ") {
            // An answer that is not an approval choice (it cannot reach an approval card): the
            // IR says only who resolved it, so the card closes, naming them.
            let card = approval_card(s.view().approval(&item("ib_1")).unwrap());
            let p = Rendered::of(&card);
            assert_eq!(status(&p), "expired", "{name}");
            assert_eq!(p.params["approver"], "Bob Li", "{name}");
            continue;
        }
        let p = approval(&s.view(), "ib_1");
        assert_eq!(status(&p), "approved", "{name}");
    }
    let view = Story::asking_with_long_arguments().view();
    approval(&view, "ib_p");
    approval(&view, "ib_j");
}

/// The answer-card rendering of a non-approval card: its flow status and markdown.
fn answer(card: &workmate_cards::Card) -> (FlowStatus, Value) {
    let rendered = Rendered::of(card);
    assert_eq!(rendered.template, Template::Answer);
    assert_eq!(rendered.item_id, None);
    assert!(rendered.params.values().all(Value::is_string));
    assert_eq!(
        Rendered::from_value(&rendered.to_value()),
        Some(rendered.clone())
    );
    (rendered.flow_status().unwrap(), rendered.to_value())
}

#[test]
fn turn_cards_are_answer_cards_writing_while_their_turn_runs() {
    let mut s = Story::asking_which_deploys_failed();
    s.reason_then_stream_a_reply();
    let segment = |view: &SessionView| turn_card(view.turn_segment(&turn("tn_1"), 0).unwrap());
    let (flow, streaming) = answer(&segment(&s.view()));
    assert_eq!(flow, FlowStatus::Inputing);
    assert_json_snapshot!("render_turn_streaming", streaming);
    s.check_the_ci_runs("call_1", "ib_1");
    assert_eq!(
        answer(&segment(&s.view())).0,
        FlowStatus::Inputing,
        "waiting is running"
    );
    s.approve_once_as_bob("call_1", "ib_1");
    let (flow, continued) = answer(&segment(&s.view()));
    assert_eq!(
        flow,
        FlowStatus::Finished,
        "a continued segment never changes again"
    );
    assert_json_snapshot!("render_turn_continued", continued);
    s.find_two_failed_runs_then_fall_back("call_1");
    s.answer_with_the_failed_deploys();
    let (flow, done) = answer(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert_eq!(flow, FlowStatus::Finished);
    assert_json_snapshot!("render_turn_done", done);

    let mut s = Story::asking_to_write_release_notes();
    s.deny_as_bob("call_w", "ib_w", "write_file");
    s.fail_rate_limited();
    let (flow, failed) = answer(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    assert_eq!(flow, FlowStatus::Failed);
    assert_json_snapshot!("render_turn_failed", failed);
}

#[test]
fn question_cards_are_answer_cards_without_buttons() {
    let mut s = Story::asking_where_to_post();
    let pending = question_card(s.view().question(&item("ib_q")).unwrap());
    let (flow, rendered) = answer(&pending);
    assert_eq!(flow, FlowStatus::Finished);
    let content = rendered["cardParamMap"]["content"].as_str().unwrap();
    assert!(
        content.contains("Where should the summary go?"),
        "{content}"
    );
    assert_json_snapshot!("render_question_pending", rendered);
    s.answer("call_q", "ib_q", "#ops");
    let answered = question_card(s.view().question(&item("ib_q")).unwrap());
    let (_, rendered) = answer(&answered);
    assert_json_snapshot!("render_question_answered", rendered);
}

#[test]
fn the_rendering_is_the_platform_render() {
    let s = Story::asking_which_deploys_failed();
    let card = turn_card(s.view().turn(&turn("tn_1")).unwrap());
    assert_eq!(render(&card), Rendered::of(&card).to_value());
    assert_eq!(
        Rendered::from_value(&serde_json::json!({"template": "other"})),
        None
    );
}

#[test]
fn the_answer_template_matches_the_code() {
    let template: Value = serde_json::from_str(include_str!("../templates/answer.json")).unwrap();
    let names: Vec<&str> = template["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let s = Story::asking_which_deploys_failed();
    let rendered = Rendered::of(&turn_card(s.view().turn(&turn("tn_1")).unwrap()));
    let keys: Vec<&str> = rendered.params.keys().map(String::as_str).collect();
    assert_eq!(names, keys);
    assert_eq!(template["variables"][0]["streaming"], true);
    let states: Vec<&str> = [
        FlowStatus::Inputing,
        FlowStatus::Finished,
        FlowStatus::Failed,
    ]
    .into_iter()
    .map(FlowStatus::as_str)
    .collect();
    assert_eq!(
        template["variables"][1]["values"],
        serde_json::json!(states)
    );
    assert_eq!(workmate_dingtalk::web::STREAMING_KEY, names[0]);
}

proptest! {
    /// Any card renders to string-valued template data that reads back, whatever its text, also
    /// when that text imitates an approval's title and outcome lines.
    #[test]
    fn any_card_renders_to_string_params(
        short in "\\PC{0,20}", md in "\\PC{0,60}", long in "\\PC{0,120}",
    ) {
        let mut card = any_text_in_every_block(&short, &md, &long);
        for candidate in [card.clone(), Card { blocks: Vec::new() }, {
            card.blocks.insert(0, Block::Text(workmate_cards::RichText(vec![
                Inline::Bold("Run ".into()), Inline::Code(short), Inline::Bold("?".into()),
            ])));
            card.blocks.push(Block::Context(vec![Inline::Text(format!("✅ Approved by {md}"))]));
            card.clone()
        }] {
            let rendered = Rendered::of(&candidate);
            prop_assert!(rendered.params.values().all(Value::is_string));
            prop_assert_eq!(Rendered::from_value(&rendered.to_value()), Some(rendered));
        }
    }

    /// Any card callback decodes without panicking.
    #[test]
    fn any_callback_decodes_without_panic(track in "\\PC{0,60}", user in "\\PC{0,20}", content in "\\PC{0,80}") {
        let callback = serde_json::json!({
            "outTrackId": track, "userId": user, "corpId": "c", "content": content,
        });
        let _ = click_inbound(&callback, None);
    }
}
