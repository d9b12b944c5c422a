//! Row (f): a plain answer on a 200-message history, as it is and under a compaction view made
//! by `compact` (the summary written by the scripted model at once), to show what the view costs
//! a turn: it is rebuilt into the outbound history on every call.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::broadcast;
use workmate_protocol::{Actor, Command, Event, EventKind, SessionId};

use super::{Fixture, Measured};

/// The tag of the long conversation, and the summarizer's (its request quotes the former, so
/// it is matched first).
pub(super) const LONG_TAG: &str = "[long]";
pub(super) const SUMMARY_WHEN: &str = "Summarize this part of the conversation";
/// User turns played before timing: 200 history messages.
pub(super) const HISTORY_TURNS: usize = 100;
/// Turns timed in each long session, and the sessions.
pub(super) const TIMED_TURNS: usize = 10;
const SESSIONS: usize = 10;

/// Times `TIMED_TURNS` turns in each of `SESSIONS` sessions after `HISTORY_TURNS` turns, with
/// the session compacted first when `compacted`.
pub(super) async fn measure(fixture: &mut Fixture, compacted: bool) -> Measured {
    let mut micros = Vec::with_capacity(SESSIONS * TIMED_TURNS);
    let mut state_events = 0;
    for s in 0..SESSIONS {
        let (session, mut events) = fixture.session().await;
        for n in 0..HISTORY_TURNS {
            let counts = fixture
                .turn(
                    &session,
                    &mut events,
                    &format!("{LONG_TAG} {s} history {n}"),
                )
                .await;
            assert_eq!(counts.deltas, 20, "{counts:?}");
        }
        if compacted {
            compact(fixture, &session, &mut events).await;
        }
        for n in 0..TIMED_TURNS {
            let started = Instant::now();
            let counts = fixture
                .turn(&session, &mut events, &format!("{LONG_TAG} {s} timed {n}"))
                .await;
            micros.push(started.elapsed().as_secs_f64() * 1e6);
            assert_eq!(counts.deltas, 20, "{counts:?}");
            state_events = counts.state;
        }
    }
    Measured {
        micros,
        state_events,
    }
}

/// Runs `compact` on `session` and waits until its view is in place.
async fn compact(
    fixture: &Fixture,
    session: &SessionId,
    events: &mut broadcast::Receiver<Arc<Event>>,
) {
    let command = Command::Compact {
        actor: Actor::named("u_bench", "Bench"),
    };
    fixture
        .hub
        .submit(&fixture.tenant, session, command)
        .await
        .unwrap();
    let mut compacted = false;
    loop {
        let event = events.recv().await.unwrap();
        match &event.kind {
            EventKind::Compacted { text } => compacted = text.contains("summarized"),
            EventKind::TurnEnd { .. } => break,
            kind if kind.is_terminal() => panic!("the compaction did not complete: {kind:?}"),
            _ => {}
        }
    }
    assert!(compacted, "the compaction wrote no summary");
    fixture
        .hub
        .wait_turn(&fixture.tenant, session)
        .await
        .unwrap();
}
