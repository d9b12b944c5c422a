//! A thread reads in the order things happened: a turn that parks on a prompt continues in a new
//! segment below the prompt's card, every card keeps one key, and only the newest segment of a
//! running turn can be stopped.

use proptest::prelude::*;
use serde_json::json;
use workmate_cards::{
    ButtonAction, ButtonStyle, CONTINUED_BELOW, Card, CardRef, STOP_LABEL, SessionView, TurnStatus,
    card_for,
};
use workmate_protocol::{Event, TurnEndStatus};

use crate::support::{Story, actions, buttons, context_lines, fold, item, stop, turn};

/// A card pump as every platform runs one: each changed card is posted under its key the first
/// time and updated afterwards. Returns the keys in the order they were first posted, each with
/// every state it was given.
fn pump(events: &[Event]) -> Vec<(String, Vec<Card>)> {
    let mut view = SessionView::new();
    let mut thread: Vec<(String, Vec<Card>)> = Vec::new();
    for event in events {
        for changed in view.apply(event) {
            let Some((key, card)) = card_for(&view, &changed) else {
                continue;
            };
            match thread.iter_mut().find(|(k, _)| *k == key) {
                Some((_, states)) => states.push(card),
                None => thread.push((key, vec![card])),
            }
        }
    }
    thread
}

fn keys(thread: &[(String, Vec<Card>)]) -> Vec<&str> {
    thread.iter().map(|(key, _)| key.as_str()).collect()
}

fn stop_actions(card: &Card) -> Vec<ButtonAction> {
    actions(card)
        .into_iter()
        .filter(|a| matches!(a, ButtonAction::Stop { .. }))
        .collect()
}

fn text(card: &Card) -> String {
    serde_json::to_string(card).unwrap()
}

/// Alice asks, the agent wants a shell command, Bob approves, the command runs and the answer
/// comes in.
fn approved_turn() -> Story {
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    s.approve_once_as_bob("call_1", "ib_1");
    s.run("call_1", "run_shell");
    s.find_two_failed_runs_then_fall_back("call_1");
    s.delta("Two deploys ");
    s.message(Some("Two deploys failed."), &[]);
    s.end(TurnEndStatus::Completed);
    s
}

#[test]
fn the_answer_comes_below_the_approval_it_waited_for() {
    let story = approved_turn();
    let thread = pump(&story.events);
    assert_eq!(keys(&thread), ["turn:tn_1", "approval:ib_1", "turn:tn_1:1"]);

    let (_, first) = &thread[0];
    let closed = first.last().unwrap();
    assert!(context_lines(closed).contains(&CONTINUED_BELOW.to_owned()));
    assert!(text(closed).contains("Let me check the CI runs."));
    assert!(!text(closed).contains("Two deploys failed."));
    assert!(stop_actions(closed).is_empty());

    let (_, below) = &thread[2];
    let done = below.last().unwrap();
    assert!(text(done).contains("Two deploys failed."));
    assert!(text(done).contains("✅ Done"));
    assert!(
        text(done).contains("gh run list"),
        "the approved call's outcome shows below"
    );
    assert!(!context_lines(done).contains(&CONTINUED_BELOW.to_owned()));
    assert!(
        stop_actions(done).is_empty(),
        "an ended turn cannot be stopped"
    );
    // While it ran, the segment below offered the Stop button.
    assert_eq!(stop_actions(&below[0]).len(), 1);
}

#[test]
fn a_continued_segment_never_changes_again() {
    let story = approved_turn();
    let mut view = SessionView::new();
    let mut closed_at = None;
    for (i, event) in story.events.iter().enumerate() {
        let changed = view.apply(event);
        if closed_at.is_none() && changed.contains(&CardRef::TurnPart(turn("tn_1"), 1)) {
            closed_at = Some(i);
            assert!(changed.contains(&CardRef::Turn(turn("tn_1"))));
        } else if closed_at.is_some() {
            assert!(
                !changed.contains(&CardRef::Turn(turn("tn_1"))),
                "{} changed the continued segment",
                event.kind.name()
            );
        }
    }
    let closed_at = closed_at.expect("a second segment");
    assert_eq!(story.events[closed_at].kind.name(), "inbox_item_resolved");
    let first = view.turn_segment(&turn("tn_1"), 0).unwrap();
    assert!(first.continued);
    // Closed, it says how its prompt was answered, not that it waits.
    assert_eq!(
        first.status,
        TurnStatus::Continued("✅ Approved by Bob Li".into())
    );
    assert_eq!(first.steps[0].allowed, Some(true));
    assert_eq!(view.turn(&turn("tn_1")).unwrap().segment, 1);
    assert_eq!(view.turn(&turn("tn_1")).unwrap().status, TurnStatus::Done);
}

#[test]
fn every_prompt_of_a_turn_opens_a_segment_below_it() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Post a summary of the failed deploys");
    s.ask_to_list_failed_runs("call_1", "ib_1");
    s.approve_once_as_bob("call_1", "ib_1");
    s.run("call_1", "run_shell");
    s.find_two_failed_runs_then_fall_back("call_1");
    s.ask_where_to_post("call_q", "ib_q");
    s.answer("call_q", "ib_q", "#ops");
    s.message(Some("Posted to #ops."), &[]);
    s.end(TurnEndStatus::Completed);
    let thread = pump(&s.events);
    assert_eq!(
        keys(&thread),
        [
            "turn:tn_1",
            "approval:ib_1",
            "turn:tn_1:1",
            "question:ib_q",
            "turn:tn_1:2"
        ]
    );
    let view = s.view();
    let segments: Vec<_> = view.turn_segments(&turn("tn_1")).collect();
    assert_eq!(segments.len(), 3);
    assert!(segments[0].continued && segments[1].continued && !segments[2].continued);
    assert_eq!(segments[2].answer, "Posted to #ops.");
    // The question's card is named by its own key, and nothing is posted for a notice.
    let (key, _) = card_for(&view, &CardRef::Question(item("ib_q"))).unwrap();
    assert_eq!(key, "question:ib_q");
    assert_eq!(card_for(&view, &CardRef::Notice(0)), None);
}

#[test]
fn card_keys_are_stable_and_unknown_cards_have_none() {
    let view = approved_turn().view();
    let key = |r: CardRef| card_for(&view, &r).map(|(key, _)| key);
    assert_eq!(key(CardRef::Turn(turn("tn_1"))).unwrap(), "turn:tn_1");
    assert_eq!(
        key(CardRef::TurnPart(turn("tn_1"), 0)).unwrap(),
        "turn:tn_1",
        "segment 0 keeps the key cards had before segments"
    );
    assert_eq!(
        key(CardRef::TurnPart(turn("tn_1"), 1)).unwrap(),
        "turn:tn_1:1"
    );
    assert_eq!(
        key(CardRef::Approval(item("ib_1"))).unwrap(),
        "approval:ib_1"
    );
    assert_eq!(key(CardRef::TurnPart(turn("tn_1"), 2)), None);
    assert_eq!(key(CardRef::Turn(turn("tn_9"))), None);
    assert_eq!(key(CardRef::Question(item("ib_1"))), None);
    // The card is the segment's own.
    let (_, card) = card_for(&view, &CardRef::TurnPart(turn("tn_1"), 1)).unwrap();
    assert!(text(&card).contains("Two deploys failed."));
}

#[test]
fn the_stop_button_names_the_session_and_the_turn() {
    let mut s = Story::new();
    s.start_turn("tn_1", "go");
    let view = s.view();
    assert_eq!(view.session_id().map(|id| id.as_str()), Some("s_1"));
    let (_, card) = card_for(&view, &CardRef::Turn(turn("tn_1"))).unwrap();
    assert_eq!(
        buttons(&card),
        [(STOP_LABEL.to_owned(), ButtonStyle::Danger)]
    );
    let stop = stop();
    assert_eq!(stop_actions(&card), std::slice::from_ref(&stop));
    let value = serde_json::to_value(&stop).unwrap();
    assert_eq!(
        value,
        json!({"type": "stop", "session_id": "s_1", "turn_id": "tn_1"})
    );
    assert_eq!(serde_json::from_value::<ButtonAction>(value).unwrap(), stop);

    s.end(TurnEndStatus::Completed);
    let view = s.view();
    let (_, card) = card_for(&view, &CardRef::Turn(turn("tn_1"))).unwrap();
    assert!(
        buttons(&card).is_empty(),
        "once the turn ends, the button is gone"
    );
}

#[test]
fn events_of_another_session_are_ignored() {
    let mut s = Story::new();
    s.start_turn("tn_1", "go");
    let mut view = s.view();
    let before = view.clone();
    let mut foreign = s.delta("not for this thread");
    foreign.session_id = "s_2".into();
    assert!(view.apply(&foreign).is_empty());
    let mut next = s.end(TurnEndStatus::Completed);
    next.session_id = "s_2".into();
    assert!(view.apply(&next).is_empty());
    assert_eq!(view, before);
    // The same events of this session do change it.
    next.session_id = "s_1".into();
    assert_eq!(view.apply(&next), [CardRef::Turn(turn("tn_1"))]);
}

#[test]
fn segments_replay_to_the_same_view_from_any_redelivery() {
    let story = approved_turn();
    let persisted = story.state_events();
    let live = story.view();
    let replayed = fold(&persisted);
    assert_eq!(live.turns(), replayed.turns());
    // Every state event delivered twice in a row, as a reconnecting surface may.
    let twice: Vec<_> = persisted
        .iter()
        .flat_map(|e| [e.clone(), e.clone()])
        .collect();
    assert_eq!(fold(&twice), replayed);
    assert_eq!(pump(&twice), pump(&persisted));
}

/// A turn with an approval and then a question: three segments.
fn two_prompt_turn() -> Story {
    let mut s = approved_turn();
    s.start_turn("tn_2", "Post it");
    s.ask_where_to_post("call_q", "ib_q");
    s.answer("call_q", "ib_q", "#ops");
    s.ask_to_raise_the_timeout("call_r", "ib_r");
    s.deny_as_bob("call_r", "ib_r", "replace_in_file");
    s.message(Some("Posted; the timeout stays."), &[]);
    s.end(TurnEndStatus::Completed);
    s
}

proptest! {
    /// A surface that reconnects replays the stored events from the start, after having seen
    /// any prefix of them: the view, and so every segment, comes out the same.
    #[test]
    fn a_replay_after_any_prefix_gives_the_same_segments(cut in 0usize..64) {
        let persisted = two_prompt_turn().state_events();
        let cut = cut.min(persisted.len());
        let once = fold(&persisted);
        let mut view = fold(&persisted[..cut]);
        for event in &persisted {
            view.apply(event);
        }
        prop_assert_eq!(&view, &once);
        prop_assert_eq!(once.turn_segments(&turn("tn_2")).count(), 3);
    }
}
