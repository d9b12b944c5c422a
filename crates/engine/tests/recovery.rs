//! Turns a crash cut short are taken up by the next process and finished by what they were
//! doing: under their own turn id, with exactly one terminal event, never running a call twice.

use std::sync::Arc;

use serde_json::json;
use workmate_protocol::{Event, EventKind, Message, NoticeKind, TurnId};

use crate::resume::{crash_after, runtime};
use crate::support::{
    Harness, Options, ShiftedClock, assert_every_call_answered_once, script, state_names,
};

/// A slowly streamed answer, so a crash lands in the middle of it.
fn slow_answer() -> serde_json::Value {
    json!({"text": "Here is the report, word by word, slowly.", "chunk_delay_ms": 40})
}

/// The turn the first process was in when it crashed.
fn cut_turn(events: &[Event]) -> TurnId {
    events
        .iter()
        .find_map(|e| matches!(e.kind, EventKind::TurnStart { .. }).then(|| e.turn_id.clone()))
        .flatten()
        .expect("the first process started a turn")
}

/// Crashes on the first streamed word of the turn's answer, after its tool ran when
/// `after_tool`; returns where the crash left things and the cut turn.
fn crash_mid_answer(
    script: &str,
    after_tool: bool,
    options: Options,
) -> (std::path::PathBuf, workmate_protocol::SessionId, TurnId) {
    let mut turn = None;
    let (dir, session, _) = crash_after(script, options, async |h| {
        let mut seen = Vec::new();
        if after_tool {
            seen.extend(
                h.events_until(|e| matches!(e.kind, EventKind::ToolFinished { .. }))
                    .await,
            );
        }
        seen.extend(
            h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
                .await,
        );
        turn = Some(cut_turn(&seen));
        None
    });
    (dir, session, turn.unwrap())
}

fn allow_all() -> Options {
    Options {
        allow_all: true,
        ..Options::default()
    }
}

/// Takes up every open turn of the reopened process; how each was finished.
async fn recover_all(h: &Harness) -> Vec<&'static str> {
    let mut how = Vec::new();
    for open in h.hub.open_turns(true).await.unwrap() {
        how.extend(h.hub.recover(&open).await.unwrap());
    }
    how
}

#[test]
fn a_turn_cut_mid_answer_is_answered_again_under_its_own_turn() {
    let script = script(json!([slow_answer()]));
    let (dir, session, turn) = crash_mid_answer(&script, false, allow_all());
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &script, allow_all()).await;
        assert_eq!(recover_all(&h).await, ["retried"]);
        let events = h.turn_events().await;
        assert!(
            !state_names(&events).contains(&"turn_start"),
            "no second turn_start: {:?}",
            state_names(&events)
        );
        assert!(events.iter().all(|e| e.turn_id.as_ref() == Some(&turn)));
        assert!(matches!(
            events.last().unwrap().kind,
            EventKind::TurnEnd { .. }
        ));
        h.idle().await;
        let history = h.history().await;
        let kinds: Vec<&str> = history.iter().map(Message::role).collect();
        assert_eq!(kinds, ["user", "notice", "assistant"], "{history:?}");
        assert!(matches!(
            history[1],
            Message::Notice {
                kind: NoticeKind::Restarted,
                ..
            }
        ));
        // Nothing is left to take up.
        assert!(h.hub.open_turns(true).await.unwrap().is_empty());
    });
}

#[test]
fn a_turn_cut_after_its_tool_ran_goes_on_from_the_result() {
    let script = script(json!([
        {"text": "Saving.", "tool_calls": [{"name": "probe_write", "arguments": {"path": "report.md"}}]},
        slow_answer()
    ]));
    let (dir, session, turn) = crash_mid_answer(&script, true, allow_all());
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &script, allow_all()).await;
        assert_eq!(recover_all(&h).await, ["continued"]);
        let events = h.turn_events().await;
        assert!(events.iter().all(|e| e.turn_id.as_ref() == Some(&turn)));
        assert!(matches!(events.last().unwrap().kind, EventKind::TurnEnd { .. }));
        h.idle().await;
        assert_eq!(h.writes.calls(), 0, "the reopened process ran nothing again");
        let history = h.history().await;
        assert_every_call_answered_once(&history);
        assert!(matches!(history.last(), Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty()));
    });
}

#[test]
fn a_turn_cut_too_long_ago_ends_with_the_restart_notice() {
    let script = script(json!([slow_answer()]));
    // A clock of this test's own (others move the shared one), an hour on at the restart.
    let clock = Arc::new(ShiftedClock::default());
    let options = || Options {
        clock: clock.clone(),
        ..allow_all()
    };
    let (dir, session, turn) = crash_mid_answer(&script, false, options());
    clock.advance(3_600_000);
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &script, options()).await;
        assert_eq!(recover_all(&h).await, ["ended"]);
        let events = h.turn_events().await;
        let last = events.last().unwrap();
        assert_eq!(last.turn_id.as_ref(), Some(&turn));
        assert!(
            matches!(&last.kind, EventKind::Error { error, error_type, .. }
                if error == workmate_engine::RESTARTED_NOTICE && error_type == "restarted"),
            "{last:?}"
        );
        h.idle().await;
        // The notice lets `retry` run the model again.
        let retried = h
            .command(workmate_protocol::Command::Retry {
                actor: Harness::alice(),
            })
            .await
            .unwrap();
        assert!(
            matches!(retried, workmate_engine::Accepted::TurnStarted(_)),
            "{retried:?}"
        );
        assert!(matches!(
            h.turn_events().await.last().unwrap().kind,
            EventKind::TurnEnd { .. }
        ));
    });
}

#[test]
fn a_message_to_a_session_whose_turn_was_cut_takes_that_turn_up_first() {
    let script = script(json!([slow_answer(), {"text": "Yes, still here."}]));
    let (dir, session, turn) = crash_mid_answer(&script, false, allow_all());
    runtime().block_on(async {
        // No start-up pass has run: the message finds the cut turn itself.
        let mut h = Harness::reopen(dir, session, &script, allow_all()).await;
        let accepted = h.say("are you there?").await;
        assert!(
            matches!(accepted, workmate_engine::Accepted::Steered),
            "{accepted:?}"
        );
        let events = h.turn_events().await;
        assert!(events.iter().all(|e| e.turn_id.as_ref() == Some(&turn)));
        assert!(matches!(
            events.last().unwrap().kind,
            EventKind::TurnEnd { .. }
        ));
        h.idle().await;
        let history = h.history().await;
        let roles: Vec<&str> = history.iter().map(Message::role).collect();
        assert_eq!(
            roles,
            ["user", "notice", "assistant", "user", "assistant"],
            "{history:?}"
        );
        assert!(h.hub.open_turns(true).await.unwrap().is_empty());
    });
}
