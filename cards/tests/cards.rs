//! Every card state of a recorded session, snapshotted as IR JSON, with the behaviour each state
//! must show asserted beside the snapshot.

use insta::assert_snapshot;
use workmate_cards::{
    Block, ButtonAction, ButtonStyle, CONTINUED_BELOW, Card, Inline, PromptState, STOP_LABEL,
    SessionView, TurnStatus, approval_card, question_card, turn_card,
};
use workmate_protocol::{ApprovalChoice, TurnEndStatus};

use crate::support::{
    FAILED_DEPLOYS_ANSWER, RATE_LIMITED, Story, alice, answer, approval, buttons, context_lines,
    item, json as to_json, turn,
};

fn status(view: &SessionView, id: &str) -> TurnStatus {
    view.turn(&turn(id)).unwrap().status.clone()
}

/// The story of the contract docs: Alice asks, the agent wants a shell command, Bob approves it,
/// the command runs, and the answer streams in as markdown.
#[test]
fn a_tool_turn_with_an_approval_goes_through_every_state() {
    let mut s = Story::asking_which_deploys_failed();
    let view = s.view();
    assert_eq!(status(&view, "tn_1"), TurnStatus::Thinking);
    let thinking = turn_card(&view.turns()[0]);
    assert_eq!(
        buttons(&thinking),
        [(STOP_LABEL.to_owned(), ButtonStyle::Danger)]
    );
    assert_snapshot!("turn_thinking", to_json(&thinking));

    s.reason_then_stream_a_reply();
    let view = s.view();
    let card = view.turn(&turn("tn_1")).unwrap();
    assert!(card.reasoning_hint);
    assert_eq!(card.answer, "Let me check the CI runs.");
    assert_snapshot!("turn_reasoning_streaming", to_json(&turn_card(card)));

    s.check_the_ci_runs("call_1", "ib_1");
    let view = s.view();
    assert_eq!(status(&view, "tn_1"), TurnStatus::WaitingForApproval);
    assert_snapshot!(
        "turn_waiting_for_approval",
        to_json(&turn_card(&view.turns()[0]))
    );
    let approval = view.approval(&item("ib_1")).unwrap();
    assert_eq!(
        approval.requested_by,
        Some(alice()),
        "the asker is named from the turn"
    );
    let pending = approval_card(approval);
    assert_eq!(
        buttons(&pending),
        [
            ("Approve once".to_owned(), ButtonStyle::Primary),
            ("Always allow command".to_owned(), ButtonStyle::Default),
            ("Allow read-only".to_owned(), ButtonStyle::Default),
            ("Deny".to_owned(), ButtonStyle::Danger),
        ]
    );
    assert!(pending.blocks.contains(&Block::Code {
        language: Some("sh".into()),
        text: "gh run list --status failure --created '>=2026-01-04' --limit 20".into(),
    }));
    assert_snapshot!("approval_run_shell_pending", to_json(&pending));

    s.approve_once_as_bob("call_1", "ib_1");
    let view = s.view();
    assert_eq!(status(&view, "tn_1"), TurnStatus::Thinking);
    let approved = approval_card(view.approval(&item("ib_1")).unwrap());
    assert!(buttons(&approved).is_empty(), "no buttons after resolution");
    assert!(context_lines(&approved).contains(&"✅ Approved by Bob Li · once".to_owned()));
    assert_snapshot!("approval_run_shell_approved", to_json(&approved));

    let first = turn_card(view.turn_segment(&turn("tn_1"), 0).unwrap());
    assert!(context_lines(&first).contains(&CONTINUED_BELOW.to_owned()));
    assert!(
        buttons(&first).is_empty(),
        "only the newest segment can stop"
    );
    assert_snapshot!("turn_continued_below", to_json(&first));

    s.run("call_1", "run_shell");
    let view = s.view();
    assert_eq!(
        status(&view, "tn_1"),
        TurnStatus::RunningTool("run_shell".into())
    );
    let running = turn_card(view.turn(&turn("tn_1")).unwrap());
    assert_eq!(
        buttons(&running),
        [(STOP_LABEL.to_owned(), ButtonStyle::Danger)]
    );
    assert_snapshot!("turn_running_tool", to_json(&running));

    s.find_two_failed_runs_then_fall_back("call_1");
    s.delta("## Failed deploys\n\nTwo");
    let view = s.view();
    assert_eq!(
        view.turn(&turn("tn_1")).unwrap().answer,
        "## Failed deploys\n\nTwo",
        "a new round-trip's text replaces the previous one"
    );
    s.message(Some(FAILED_DEPLOYS_ANSWER), &[]);
    s.end(TurnEndStatus::Completed);
    let view = s.view();
    let done = turn_card(view.turn(&turn("tn_1")).unwrap());
    assert!(buttons(&done).is_empty(), "an ended turn cannot be stopped");
    assert_eq!(status(&view, "tn_1"), TurnStatus::Done);
    assert!(done.blocks.iter().any(|b| matches!(b, Block::Table { .. })));
    assert!(done.blocks.contains(&Block::Heading {
        text: "Failed deploys".into()
    }));
    assert_snapshot!("turn_done_markdown", to_json(&done));
}

#[test]
fn a_denied_write_then_a_failed_turn() {
    let mut s = Story::asking_to_write_release_notes();
    let pending = approval_card(s.view().approval(&item("ib_w")).unwrap());
    let code = pending
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Code { language, text } => Some((language.clone(), text.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(code.0.as_deref(), Some("md"));
    assert_eq!(
        code.1.lines().count(),
        20,
        "the first 20 lines of the content"
    );
    assert!(context_lines(&pending).contains(&"… 5 more lines not shown".to_owned()));
    assert_snapshot!("approval_write_file_pending", to_json(&pending));

    s.deny_as_bob("call_w", "ib_w", "write_file");
    let view = s.view();
    let denied = approval_card(view.approval(&item("ib_w")).unwrap());
    assert!(buttons(&denied).is_empty());
    assert!(context_lines(&denied).contains(&"❌ Denied by Bob Li".to_owned()));
    assert_snapshot!("approval_write_file_denied", to_json(&denied));
    assert_eq!(status(&view, "tn_1"), TurnStatus::Thinking);

    s.fail_rate_limited();
    let view = s.view();
    assert_eq!(
        status(&view, "tn_1"),
        TurnStatus::Failed(RATE_LIMITED.into())
    );
    let failed = turn_card(view.turn(&turn("tn_1")).unwrap());
    assert!(buttons(&failed).is_empty());
    assert_snapshot!("turn_failed", to_json(&failed));
}

#[test]
fn an_edit_waits_then_the_turn_is_stopped() {
    let mut s = Story::asking_to_raise_the_timeout();
    let view = s.view();
    let pending = approval_card(view.approval(&item("ib_r")).unwrap());
    assert!(pending.blocks.contains(&Block::Code {
        language: Some("diff".into()),
        text: "-timeout: 10m\n-retries: 1\n+timeout: 20m\n+retries: 2".into(),
    }));
    assert_snapshot!("approval_replace_in_file_pending", to_json(&pending));

    s.stop_while_waiting("call_r", "ib_r", "replace_in_file");
    let view = s.view();
    assert_eq!(
        status(&view, "tn_1"),
        TurnStatus::Stopped,
        "a stopped turn stays stopped"
    );
    let dismissed = approval_card(view.approval(&item("ib_r")).unwrap());
    assert!(context_lines(&dismissed).contains(&"Dismissed: the turn was stopped".to_owned()));
    assert!(buttons(&dismissed).is_empty());
    let stopped = turn_card(view.turn(&turn("tn_1")).unwrap());
    assert!(buttons(&stopped).is_empty());
    assert_snapshot!("turn_stopped", to_json(&stopped));
}

#[test]
fn patches_and_unknown_tools_show_their_arguments() {
    let mut s = Story::asking_with_long_arguments();
    let view = s.view();
    let patch_card = approval_card(view.approval(&item("ib_p")).unwrap());
    assert!(context_lines(&patch_card).contains(&"… 54 more lines not shown".to_owned()));
    assert_snapshot!("approval_apply_patch_pending", to_json(&patch_card));
    let json_card = approval_card(view.approval(&item("ib_j")).unwrap());
    let code = json_card
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Code { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(code.chars().count(), 2_000);
    assert!(
        context_lines(&json_card)
            .iter()
            .any(|l| l.starts_with("Arguments cut at 2,000"))
    );
    assert!(
        buttons(&json_card).contains(&("Always in automation".to_owned(), ButtonStyle::Default))
    );
    assert_snapshot!("approval_json_pending", to_json(&json_card));
    // Two prompts of one turn: answering one leaves it waiting for the other.
    s.approve_once_as_bob("call_p", "ib_p");
    assert_eq!(status(&s.view(), "tn_1"), TurnStatus::WaitingForApproval);
}

#[test]
fn a_turn_at_the_iteration_cap() {
    let s = Story::failing_until_the_step_limit();
    let view = s.view();
    assert_eq!(status(&view, "tn_1"), TurnStatus::MaxIterations);
    assert_snapshot!("turn_max_iterations", to_json(&turn_card(&view.turns()[0])));
}

#[test]
fn questions_offer_their_options_and_show_the_answer() {
    let mut s = Story::asking_where_to_post();
    let view = s.view();
    assert_eq!(status(&view, "tn_1"), TurnStatus::WaitingForAnswer);
    let pending = question_card(view.question(&item("ib_q")).unwrap());
    assert_eq!(
        buttons(&pending),
        [
            ("#ops".to_owned(), ButtonStyle::Primary),
            ("#deploys".to_owned(), ButtonStyle::Default)
        ]
    );
    let Some(Block::Actions(row)) = pending
        .blocks
        .iter()
        .find(|b| matches!(b, Block::Actions(_)))
    else {
        panic!("no buttons");
    };
    assert_eq!(row[1].action, answer("ib_q", "#deploys"));
    assert!(context_lines(&pending).contains(&"Or reply in the thread to answer.".to_owned()));
    assert_snapshot!("question_pending", to_json(&pending));

    s.answer("call_q", "ib_q", "#ops");
    let view = s.view();
    assert_eq!(status(&view, "tn_1"), TurnStatus::Thinking);
    let card = view.question(&item("ib_q")).unwrap();
    assert!(matches!(card.state, PromptState::Resolved { .. }));
    let answered = question_card(card);
    assert!(buttons(&answered).is_empty());
    assert!(context_lines(&answered).contains(&"💬 Answered by Alice Chen: #ops".to_owned()));
    assert_snapshot!("question_answered", to_json(&answered));
}

#[test]
fn button_actions_round_trip_through_a_button_value() {
    let action = approval("ib_1", ApprovalChoice::AlwaysCommand);
    let value = serde_json::to_string(&action).unwrap();
    assert_eq!(
        value,
        r#"{"type":"resolve","item_id":"ib_1","resolution":{"type":"approval","choice":"always_command"}}"#
    );
    assert_eq!(
        serde_json::from_str::<ButtonAction>(&value).unwrap(),
        action
    );
    let card = Card {
        blocks: vec![Block::Text(workmate_cards::RichText(vec![Inline::Link {
            text: "run".into(),
            url: "https://ci.example.com".into(),
        }]))],
    };
    let back: Card = serde_json::from_str(&to_json(&card)).unwrap();
    assert_eq!(back, card);
}
