//! Durable resume: a process that dies mid-turn is replaced by one that finishes the turn without
//! re-asking, re-running or orphaning anything. Each test runs the first process on its own tokio
//! runtime and drops that runtime mid-turn: every task stops at its current await, as in a crash.

use serde_json::json;
use workmate_protocol::{
    ApprovalChoice, EventKind, InboxItemId, Message, Resolution, SessionId, Surface, ToolStatus,
};
use workmate_store::{InboxFilter, InboxItemState};

use crate::support::{Harness, Options, assert_every_call_answered_once, script, state_names};

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `until` in a first process, then kills it; returns where it left its files.
///
/// The first process runs on one thread: once `until` returns, none of its tasks is polled
/// again, as after a SIGKILL. (A runtime with worker threads would keep polling while it shuts
/// down, and a turn could write what a killed process never would.)
pub(crate) fn crash_after<F>(
    script: &str,
    options: Options,
    until: F,
) -> (std::path::PathBuf, SessionId, Option<InboxItemId>)
where
    F: AsyncFnOnce(&mut Harness) -> Option<InboxItemId>,
{
    let first = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let left = first.block_on(async {
        let mut h = Harness::with(script, options).await;
        h.say("write this week's report").await;
        let item = until(&mut h).await;
        // Events are published when their step is queued, a moment before it commits: the
        // crash comes once what was seen is stored.
        h.hub.flushed(&h.tenant, &h.session).await.unwrap();
        h.keep_files();
        (h.dir.clone(), h.session.clone(), item)
    });
    first.shutdown_background();
    left
}

fn write_script() -> String {
    script(json!([
        {"text": "Saving.", "tool_calls": [{"name": "probe_write", "arguments": {"path": "report.md"}}]},
        {"text": "Saved."}
    ]))
}

#[test]
fn a_turn_parked_on_an_approval_survives_a_crash_without_a_second_prompt() {
    let (dir, session, item) = crash_after(&write_script(), Options::default(), async |h| {
        let parked = h
            .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
            .await;
        let EventKind::InboxItemParked { item_id, .. } = &parked.last().unwrap().kind else {
            unreachable!()
        };
        Some(item_id.clone())
    });
    let item = item.unwrap();
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &write_script(), Options::default()).await;
        assert_eq!(h.hub.resume_pending().await.unwrap(), 1);
        let once = Resolution::Approval {
            choice: ApprovalChoice::Once,
        };
        h.hub
            .resolve(&h.tenant, &item, &once, &Harness::alice(), Surface::Slack)
            .await
            .unwrap();
        let events = h.turn_events().await;
        assert!(
            !state_names(&events).contains(&"permission_required"),
            "no second prompt"
        );
        // The parked turn goes on under its own id: no second turn starts.
        assert!(!state_names(&events).contains(&"turn_start"));
        let cut = h
            .store
            .events()
            .list_after(&h.tenant, &h.session, 0, 1000)
            .await
            .unwrap();
        let first_turn = cut.iter().find_map(|e| e.turn_id.clone()).unwrap();
        assert!(
            events
                .iter()
                .filter_map(|e| e.turn_id.as_ref())
                .all(|turn| turn == &first_turn)
        );
        assert!(matches!(
            events.last().unwrap().kind,
            EventKind::TurnEnd { .. }
        ));
        h.idle().await;
        assert_eq!(h.writes.calls(), 1);
        let items = h
            .store
            .inbox()
            .list(
                &h.tenant,
                &InboxFilter {
                    session: Some(h.session.clone()),
                    ..Default::default()
                },
                10,
            )
            .await
            .unwrap();
        assert_eq!(items.len(), 1, "the parked item is the same one");
        assert_every_call_answered_once(&h.history().await);
    });
}

#[test]
fn an_answer_given_while_the_service_was_down_applies_on_resume() {
    let (dir, session, item) = crash_after(&write_script(), Options::default(), async |h| {
        let parked = h
            .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
            .await;
        let EventKind::InboxItemParked { item_id, .. } = &parked.last().unwrap().kind else {
            unreachable!()
        };
        Some(item_id.clone())
    });
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &write_script(), Options::default()).await;
        // Resolving an item of an idle session resumes it.
        let once = Resolution::Approval {
            choice: ApprovalChoice::Once,
        };
        h.hub
            .resolve(
                &h.tenant,
                item.as_ref().unwrap(),
                &once,
                &Harness::alice(),
                Surface::Http,
            )
            .await
            .unwrap();
        let events = h.turn_events().await;
        assert!(
            matches!(events.last().unwrap().kind, EventKind::TurnEnd { .. }),
            "{:?}",
            state_names(&events)
        );
        h.idle().await;
        assert_eq!(h.writes.calls(), 1);
        assert_every_call_answered_once(&h.history().await);
    });
}

#[test]
fn a_tool_that_was_running_is_not_run_again() {
    let options = || Options {
        allow_all: true,
        ..Options::default()
    };
    let slow = script(json!([
        {"tool_calls": [{"name": "probe_write", "arguments": {"ms": 60000}}]},
        {"text": "The write may not have happened; check."}
    ]));
    let (dir, session, _) = crash_after(&slow, options(), async |h| {
        h.events_until(|e| matches!(e.kind, EventKind::ToolStarted { .. }))
            .await;
        None
    });
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &slow, options()).await;
        assert_eq!(h.hub.resume_pending().await.unwrap(), 1);
        let events = h.turn_events().await;
        let finished = events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::ToolFinished { status, reason, .. } => Some((*status, reason.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(finished.0, ToolStatus::Error);
        assert_eq!(
            finished.1.as_deref(),
            Some("interrupted: outcome unknown (the service restarted while it ran)")
        );
        assert!(matches!(
            events.last().unwrap().kind,
            EventKind::TurnEnd { .. }
        ));
        h.idle().await;
        assert_eq!(h.writes.calls(), 0, "never re-run");
        assert_every_call_answered_once(&h.history().await);
        assert_eq!(
            h.hub.resume_pending().await.unwrap(),
            0,
            "nothing left to resume"
        );
    });
}

#[test]
fn an_idempotent_tool_that_was_running_is_run_again() {
    let slow = script(json!([
        {"tool_calls": [{"name": "probe_read", "arguments": {"ms": 60000}}]},
        {"text": "done"}
    ]));
    let (dir, session, _) = crash_after(&slow, Options::default(), async |h| {
        h.events_until(|e| matches!(e.kind, EventKind::ToolStarted { .. }))
            .await;
        None
    });
    let quick = script(json!([
        {"tool_calls": [{"name": "probe_read", "arguments": {"ms": 60000}}]},
        {"text": "done"}
    ]));
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &quick, Options::default()).await;
        h.hub.resume_pending().await.unwrap();
        h.events_until(|e| matches!(e.kind, EventKind::ToolStarted { .. }))
            .await;
        // `tool_started` is emitted just before the tool's own code runs.
        let deadline = std::time::Instant::now() + crate::support::PATIENCE;
        while h.reads.calls() == 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(h.reads.calls(), 1, "re-run after the restart");
    });
}

/// A graceful stop (a deploy, a SIGTERM) is not a denial: the prompt stays parked, its call stays
/// unanswered, and the next start waits on the same item.
#[test]
fn a_graceful_stop_leaves_a_parked_prompt_parked_for_the_next_start() {
    let (dir, session, item) = runtime().block_on(async {
        let mut h = Harness::with(&write_script(), Options::default()).await;
        h.say("write this week's report").await;
        let item = h.parked().await;
        h.hub.shutdown().await;
        let history = h.history().await;
        assert!(
            !history.iter().any(|m| matches!(m, Message::Tool { .. })),
            "nothing answered the call: {history:?}"
        );
        let parked = h
            .store
            .inbox()
            .get(&h.tenant, &item)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(parked.state, InboxItemState::Pending);
        h.keep_files();
        (h.dir.clone(), h.session.clone(), item)
    });
    runtime().block_on(async {
        let mut h = Harness::reopen(dir, session, &write_script(), Options::default()).await;
        // The stopped turn was left open (no error, no interrupted): it goes on under its own
        // id, without a second turn_start.
        assert_eq!(h.hub.resume_pending().await.unwrap(), 1);
        h.decide(&item, ApprovalChoice::Once).await;
        let events = h.turn_events().await;
        assert!(
            !state_names(&events).contains(&"permission_required"),
            "no second prompt"
        );
        assert!(matches!(
            events.last().unwrap().kind,
            EventKind::TurnEnd { .. }
        ));
        h.idle().await;
        assert_eq!(h.writes.calls(), 1);
        assert_every_call_answered_once(&h.history().await);
    });
}

/// A crash can fall between the prompt's inbox row (stored at once) and the events announcing it
/// (queued for the session's log): parked again, such a prompt is announced then, so a chat card
/// shows it and someone can answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_stored_but_never_announced_is_announced_when_parked_again() {
    let mut h = Harness::with(&write_script(), Options::default()).await;
    // The row the first process stored for the call before it died, without its events.
    let (stored, created) = h
        .store
        .inbox()
        .park(
            &h.tenant,
            &workmate_store::NewInboxItem {
                session_id: h.session.clone(),
                tool_call_id: Some("call_0_0".into()),
                kind: workmate_protocol::InboxItemKind::Approval,
                title: "Run `probe_write`?".into(),
                body: String::new(),
                inbox: "default".into(),
                visibility: workmate_protocol::Visibility::Inline,
                requested_by: None,
                data: json!({}),
            },
        )
        .await
        .unwrap();
    assert!(created);
    h.say("write this week's report").await;
    let announced = h.parked().await;
    assert_eq!(announced, stored.id, "the same item, announced now");
    h.decide(&announced, ApprovalChoice::Once).await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    assert_eq!(h.writes.calls(), 1);
}
