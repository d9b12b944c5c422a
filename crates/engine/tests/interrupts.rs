//! Stopping a turn from any state answers every tool call exactly once.

use serde_json::json;
use workmate_protocol::{Actor, Command, EventKind, Message, NoticeKind, ToolStatus};
use workmate_store::InboxItemState;

use crate::support::{Harness, Options, assert_every_call_answered_once, script};

fn stop() -> Command {
    Command::Interrupt {
        actor: Actor::new("u_alice"),
    }
}

#[tokio::test]
async fn stopping_while_streaming_keeps_the_partial_text() {
    let words = "one two three four five six seven eight nine ten";
    let mut h = Harness::new(&script(
        json!([{"text": words, "reasoning": "hmm", "chunk_delay_ms": 200}]),
    ))
    .await;
    h.say("count").await;
    h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
        .await;
    h.command(stop()).await.unwrap();
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::Interrupted { .. }
    ));
    h.idle().await;
    let history = h.history().await;
    let Message::Assistant {
        content,
        tool_calls,
        reasoning,
        ..
    } = &history[1]
    else {
        panic!("partial assistant message")
    };
    assert!(
        content.starts_with("one") && content.len() < words.len(),
        "{content:?}"
    );
    assert!(tool_calls.is_empty());
    assert_eq!(reasoning.as_deref(), Some("hmm"));
    assert!(matches!(
        history.last().unwrap(),
        Message::Notice {
            kind: NoticeKind::Interrupted,
            ..
        }
    ));
}

#[tokio::test]
async fn stopping_while_awaiting_approval_answers_the_call_and_leaves_the_item_pending() {
    let mut h = Harness::new(&script(json!([
        {"tool_calls": [{"name": "probe_write", "arguments": {}}, {"name": "probe_read", "arguments": {}}]}
    ]))).await;
    h.say("go").await;
    let parked = h
        .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
        .await;
    let EventKind::InboxItemParked { item_id, .. } = &parked.last().unwrap().kind else {
        unreachable!()
    };
    h.command(stop()).await.unwrap();
    let events = h.turn_events().await;
    let statuses: Vec<ToolStatus> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolFinished { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![ToolStatus::Interrupted, ToolStatus::Interrupted]
    );
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::Interrupted { .. }
    ));
    h.idle().await;
    assert_every_call_answered_once(&h.history().await);
    assert_eq!(h.reads.calls() + h.writes.calls(), 0);
    let item = h
        .store
        .inbox()
        .get(&h.tenant, item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        item.state,
        InboxItemState::Pending,
        "a later answer is a no-op for this turn"
    );
}

#[tokio::test]
async fn stopping_between_serial_calls_interrupts_the_running_one_and_skips_the_rest() {
    let mut h = Harness::with(
        &script(json!([{"tool_calls": [
            {"name": "probe_write", "arguments": {"ms": 10000}},
            {"name": "probe_write", "arguments": {"ms": 10000}},
            {"name": "probe_write", "arguments": {"ms": 10000}}
        ]}])),
        Options {
            allow_all: true,
            ..Options::default()
        },
    )
    .await;
    h.say("go").await;
    h.events_until(|e| matches!(e.kind, EventKind::ToolStarted { .. }))
        .await;
    let stopped_at = std::time::Instant::now();
    h.command(stop()).await.unwrap();
    let events = h.turn_events().await;
    assert!(
        stopped_at.elapsed() < std::time::Duration::from_secs(5),
        "the running tool stopped promptly"
    );
    let statuses: Vec<ToolStatus> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolFinished { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, vec![ToolStatus::Interrupted; 3]);
    assert_eq!(h.writes.calls(), 1, "only the first call ever started");
    h.idle().await;
    assert_every_call_answered_once(&h.history().await);
}

#[tokio::test]
async fn a_stalled_provider_cannot_hold_the_turn() {
    let mut h = Harness::new(&script(json!([{"text": "a b", "chunk_delay_ms": 3600000}]))).await;
    h.say("go").await;
    h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
        .await;
    h.command(stop()).await.unwrap();
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::Interrupted { .. }
    ));
}
