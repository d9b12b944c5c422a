//! The fold's guarantees: deterministic replay, idempotence, first answer wins, unknown kinds
//! ignored, and the changed-card references a surface re-renders.

use serde_json::json;
use workmate_cards::{CardRef, PromptState, SessionView, TurnStatus, approval_card, turn_card};
use workmate_protocol::{
    ApprovalChoice, EventKind, InboxItemKind, PermissionMode, Resolution, ToolStatus, TurnEndStatus,
};

use crate::support::{Story, alice, bob, call, fold, item, turn};

/// A whole session: one approved tool turn, then a second turn with a session-level notice
/// between them.
fn session() -> Story {
    let mut s = Story::new();
    s.start_turn("tn_1", "Which deploys failed?");
    s.reasoning("Let me think");
    s.delta("Checking");
    s.state(EventKind::AssistantMessage {
        text: Some("Checking the runs.".into()),
        tool_calls: vec!["run_shell".into()],
        reasoning: Some("Let me think".into()),
        usage: None,
    });
    let args = json!({"command": "gh run list"});
    s.propose("call_1", "run_shell", args.clone());
    s.ask_permission(
        "call_1",
        "ib_1",
        "run_shell",
        args,
        &[ApprovalChoice::Once, ApprovalChoice::Deny],
    );
    s.approve_once_as_bob("call_1", "ib_1");
    s.run("call_1", "run_shell");
    s.finish(
        "call_1",
        "run_shell",
        ToolStatus::Ok,
        Some("2 failed"),
        None,
    );
    s.state(EventKind::IterationEnd { iteration: 1 });
    s.delta("Two ");
    s.delta("failed.");
    s.message(Some("Two failed."), &[]);
    s.end(TurnEndStatus::Completed);
    s.between_turns();
    s.state(EventKind::ModeChanged {
        from: PermissionMode::Interactive,
        to: PermissionMode::Plan,
        by: alice(),
    });
    s.start_turn("tn_2", "Thanks");
    s.delta("You're welcome.");
    s
}

#[test]
fn replaying_gives_the_same_view_and_the_same_cards() {
    let story = session();
    let a = story.view();
    let b = story.view();
    assert_eq!(a, b);
    for (x, y) in a.turns().iter().zip(b.turns()) {
        assert_eq!(turn_card(x), turn_card(y));
    }
    // tn_1 parked on an approval, so it shows as two segments; tn_2 as one.
    assert_eq!(a.turns().len(), 3);
    assert_eq!(a.turn_segments(&turn("tn_1")).count(), 2);
    assert_eq!(
        a.last_seq(),
        story.events.iter().map(|e| e.seq).max().unwrap()
    );
}

#[test]
fn applying_events_again_changes_nothing() {
    let story = session();
    let mut view = story.view();
    let before = view.clone();
    // Deltas after the latest state event are the live stream; every other event is old news.
    let last = view.last_seq();
    for event in story.events.iter().filter(|e| e.is_state() || e.seq < last) {
        assert_eq!(
            view.apply(event),
            Vec::new(),
            "{} applied twice",
            event.kind.name()
        );
    }
    assert_eq!(view, before);
}

#[test]
fn a_redelivered_state_event_changes_nothing() {
    let story = session();
    let mut view = SessionView::new();
    for event in &story.events {
        view.apply(event);
        if event.is_state() {
            let before = view.clone();
            assert!(
                view.apply(event).is_empty(),
                "{} redelivered",
                event.kind.name()
            );
            assert_eq!(view, before);
        }
    }
    assert_eq!(view, story.view());
}

#[test]
fn persisted_state_events_alone_rebuild_the_finished_turn() {
    let story = session();
    let live = story.view();
    let replayed = fold(&story.state_events());
    let id = turn("tn_1");
    assert!(live.turn_segments(&id).eq(replayed.turn_segments(&id)));
    assert_eq!(live.approvals(), replayed.approvals());
    assert_eq!(live.turn(&id).unwrap().answer, "Two failed.");
    assert!(
        replayed.turn_segment(&id, 0).unwrap().reasoning_hint,
        "reasoning comes back from the message"
    );
}

#[test]
fn session_notices_and_what_each_event_changed() {
    let story = session();
    let mut view = SessionView::new();
    let changes: Vec<Vec<CardRef>> = story.events.iter().map(|e| view.apply(e)).collect();
    assert_eq!(
        view.notices(),
        ["Mode changed from interactive to plan by Alice Chen"]
    );
    let names: Vec<&str> = story.events.iter().map(|e| e.kind.name()).collect();
    let at = |name: &str| names.iter().position(|n| *n == name).unwrap();
    assert_eq!(changes[at("session_created")], Vec::new());
    assert_eq!(
        changes[at("inbox_item_parked")],
        [CardRef::Approval(item("ib_1"))]
    );
    assert_eq!(
        changes[at("inbox_item_resolved")],
        [
            CardRef::Approval(item("ib_1")),
            CardRef::Turn(turn("tn_1")),
            CardRef::TurnPart(turn("tn_1"), 1)
        ],
        "the answer closes the segment above the approval and opens one below it"
    );
    assert_eq!(changes[at("mode_changed")], [CardRef::Notice(0)]);
    assert_eq!(changes.last().unwrap(), &[CardRef::Turn(turn("tn_2"))]);
    assert_eq!(view.turn(&turn("tn_2")).unwrap().answer, "You're welcome.");
}

#[test]
fn the_first_answer_wins() {
    let mut s = Story::new();
    s.start_turn("tn_1", "go");
    let args = json!({"command": "make deploy"});
    s.ask_permission(
        "call_1",
        "ib_1",
        "run_shell",
        args,
        &[ApprovalChoice::Once, ApprovalChoice::Deny],
    );
    s.resolve(
        "call_1",
        "ib_1",
        InboxItemKind::Approval,
        Resolution::Approval {
            choice: ApprovalChoice::Deny,
        },
        bob(),
    );
    let late = s.resolve(
        "call_1",
        "ib_1",
        InboxItemKind::Approval,
        Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
        alice(),
    );
    let mut view = fold(&s.events[..s.events.len() - 1]);
    assert_eq!(view.apply(&late), Vec::new());
    let PromptState::Resolved { by, resolution, .. } = &view.approval(&item("ib_1")).unwrap().state
    else {
        panic!("not resolved");
    };
    assert_eq!(by, &bob());
    assert_eq!(
        resolution,
        &Resolution::Approval {
            choice: ApprovalChoice::Deny
        }
    );
    let card = approval_card(view.approval(&item("ib_1")).unwrap());
    assert!(
        serde_json::to_string(&card)
            .unwrap()
            .contains("Denied by Bob Li")
    );
}

#[test]
fn stale_and_foreign_events_are_ignored() {
    let mut s = Story::new();
    s.start_turn("tn_1", "go");
    s.state(EventKind::Compacting);
    s.end(TurnEndStatus::Completed);
    let mut view = s.view();
    let before = view.clone();
    // A delta that arrives after its turn ended, one for an unknown turn, a parked item whose
    // prompt was never announced, and an old delta from before the latest state event.
    let late = s.delta("late text");
    assert_eq!(view.apply(&late), Vec::new());
    s.start_turn("tn_x", "other");
    let mut stranger = s.delta("hello");
    stranger.turn_id = Some(turn("tn_unknown"));
    assert!(view.apply(&stranger).is_empty());
    let parked = s.park("call_9", "ib_9", InboxItemKind::Approval, "run_shell");
    view.apply(&parked);
    assert!(view.approvals().is_empty());
    let mut old = late.clone();
    old.seq = 1;
    assert!(view.apply(&old).is_empty());
    assert_eq!(view.turns()[0], before.turns()[0]);
    assert_eq!(view.turns()[0].status, TurnStatus::Done);
}

#[test]
fn parallel_calls_keep_the_turn_running_until_the_last_one_ends() {
    let mut s = Story::new();
    s.start_turn("tn_1", "read both");
    s.propose("call_a", "read_file", json!({"path": "a.txt"}));
    s.propose(
        "call_b",
        "web_fetch",
        json!({"url": "https://example.com/"}),
    );
    s.run("call_a", "read_file");
    s.run("call_b", "web_fetch");
    s.finish("call_b", "web_fetch", ToolStatus::Ok, Some("<html>"), None);
    let view = s.view();
    let card = view.turn(&turn("tn_1")).unwrap();
    assert_eq!(card.status, TurnStatus::RunningTool("read_file".into()));
    assert_eq!(card.steps.len(), 2);
    assert_eq!(card.steps[1].summary, "https://example.com/");
    s.finish("call_a", "read_file", ToolStatus::Ok, Some("hello"), None);
    assert_eq!(
        s.view().turn(&turn("tn_1")).unwrap().status,
        TurnStatus::Thinking
    );
}

#[test]
fn step_summaries_are_one_short_line() {
    let mut s = Story::new();
    s.start_turn("tn_1", "go");
    s.propose(
        "call_1",
        "run_shell",
        json!({"command": format!("echo {}\nls", "a".repeat(200))}),
    );
    s.propose("call_2", "apply_patch", json!({"patch": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.rs\n*** End Patch"}));
    s.propose("call_3", "search", json!({"q": "deploys", "limit": 5}));
    let view = s.view();
    let steps = &view.turn(&turn("tn_1")).unwrap().steps;
    assert_eq!(steps[0].summary.chars().count(), 120);
    assert!(steps[0].summary.ends_with('…') && !steps[0].summary.contains('\n'));
    assert_eq!(steps[1].summary, "a.txt, b.rs");
    assert_eq!(steps[2].summary, r#"{"q":"deploys","limit":5}"#);
    assert_eq!(steps[2].tool_call_id, call("call_3"));
}
