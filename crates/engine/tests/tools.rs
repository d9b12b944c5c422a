//! Which calls run together and which run alone.

use serde_json::json;
use workmate_protocol::{EventKind, Message};

use crate::support::{Harness, Options, script, state_names};

#[tokio::test]
async fn cleared_low_risk_calls_really_overlap() {
    let calls: Vec<_> = (0..4)
        .map(|_| json!({"name": "probe_read", "arguments": {"ms": 300}}))
        .collect();
    let mut h = Harness::new(&script(json!([{"tool_calls": calls}, {"text": "done"}]))).await;
    h.say("read four files").await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    assert_eq!(h.reads.calls(), 4);
    assert!(
        h.reads.max_active() >= 2,
        "max overlap {}",
        h.reads.max_active()
    );
    // All starts come before the first finish, and results are recorded in call order.
    let names = state_names(&events);
    let first_finish = names.iter().position(|n| *n == "tool_finished").unwrap();
    assert_eq!(
        names[..first_finish]
            .iter()
            .filter(|n| **n == "tool_started")
            .count(),
        4
    );
    h.idle().await;
    let history = h.history().await;
    let Message::Assistant { tool_calls, .. } = &history[1] else {
        panic!()
    };
    let answered: Vec<_> = history
        .iter()
        .filter_map(|m| match m {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        answered,
        tool_calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn calls_that_are_not_low_risk_never_overlap() {
    let calls: Vec<_> = (0..3)
        .map(|_| json!({"name": "probe_write", "arguments": {"ms": 100}}))
        .collect();
    let mut h = Harness::with(
        &script(json!([{"tool_calls": calls}, {"text": "done"}])),
        Options {
            allow_all: true,
            ..Options::default()
        },
    )
    .await;
    h.say("write three files").await;
    h.turn_events().await;
    assert_eq!(h.writes.calls(), 3);
    assert_eq!(h.writes.max_active(), 1);
}

#[tokio::test]
async fn a_mixed_batch_runs_the_reads_together_first_then_the_rest_in_order() {
    let mut h = Harness::with(
        &script(json!([{"tool_calls": [
            {"name": "probe_write", "arguments": {"ms": 50}},
            {"name": "probe_read", "arguments": {"ms": 200}},
            {"name": "probe_read", "arguments": {"ms": 200}}
        ]}, {"text": "done"}])),
        Options {
            allow_all: true,
            ..Options::default()
        },
    )
    .await;
    h.say("mixed").await;
    let events = h.turn_events().await;
    let finished: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolFinished { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(finished, vec!["probe_read", "probe_read", "probe_write"]);
    assert!(h.reads.max_active() >= 2);
}

#[tokio::test]
async fn an_unknown_tool_is_answered_with_an_error() {
    let mut h = Harness::new(&script(
        json!([{"tool_calls": [{"name": "launch_rockets", "arguments": {}}]}, {"text": "sorry"}]),
    ))
    .await;
    h.say("go").await;
    let events = h.turn_events().await;
    let reason = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolFinished { reason, .. } => reason.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(reason, "unknown tool: launch_rockets");
}

#[tokio::test]
async fn every_call_is_authorized_before_any_runs() {
    let mut h = Harness::new(&script(json!([{"tool_calls": [
        {"name": "probe_read", "arguments": {}},
        {"name": "probe_write", "arguments": {}}
    ]}, {"text": "done"}])))
    .await;
    h.say("read then write").await;
    let parked = h
        .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
        .await;
    assert_eq!(
        state_names(&parked),
        vec![
            "turn_start",
            "assistant_message",
            "tool_proposed",
            "tool_proposed",
            "permission_required",
            "inbox_item_parked"
        ]
    );
    assert_eq!(
        h.reads.calls(),
        0,
        "the cleared read waits for the whole message to be authorized"
    );
}

#[tokio::test]
async fn the_concurrent_batch_finishes_even_when_stopped() {
    let calls: Vec<_> = (0..2)
        .map(|_| json!({"name": "probe_read", "arguments": {"ms": 300}}))
        .collect();
    let mut h = Harness::new(&script(json!([{"tool_calls": calls}, {"text": "never"}]))).await;
    h.say("read two").await;
    h.events_until(|e| matches!(e.kind, EventKind::ToolStarted { .. }))
        .await;
    h.command(workmate_protocol::Command::Interrupt {
        actor: workmate_protocol::Actor::new("u_alice"),
    })
    .await
    .unwrap();
    let events = h.turn_events().await;
    let statuses: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolFinished { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![workmate_protocol::ToolStatus::Ok; 2],
        "low-risk batch is not cancellable"
    );
    assert!(
        matches!(events.last().unwrap().kind, EventKind::Interrupted { .. }),
        "the turn stops after it"
    );
}

#[tokio::test]
async fn explore_runs_a_read_only_child_and_returns_its_findings() {
    let script = json!({"conversations": [
        {"when": "TODO", "turns": [
            {"tool_calls": [{"name": "probe_read", "arguments": {}}, {"name": "probe_write", "arguments": {}}]},
            {"text": "Two TODOs, both in main.rs."}
        ]},
        {"when": "*", "turns": [
            {"tool_calls": [{"name": "explore", "arguments": {"task": "find TODO markers"}}]},
            {"text": "The explorer found two."}
        ]}
    ]})
    .to_string();
    let mut h = Harness::new(&script).await;
    h.say("investigate the code").await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    assert!(
        !state_names(&events).contains(&"permission_required"),
        "exploring never asks"
    );
    h.idle().await;
    let history = h.history().await;
    let tool = history
        .iter()
        .find_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(tool.contains("Two TODOs, both in main.rs."), "{tool}");
    assert_eq!(h.reads.calls(), 1);
    assert_eq!(h.writes.calls(), 0, "the explorer has no write tools");
    let requests = h.model.requests();
    let child_tools: Vec<&str> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        child_tools,
        vec!["probe_read"],
        "only read-only tools, no ask_user, no nested explore"
    );
}

#[tokio::test]
async fn explorations_asked_together_run_together() {
    let explorer = |found: &str| {
        json!([
            {"tool_calls": [{"name": "probe_read", "arguments": {"ms": 300}}]},
            {"text": found}
        ])
    };
    let script = json!({"conversations": [
        {"when": "alpha", "turns": explorer("Alpha is in a.rs.")},
        {"when": "beta", "turns": explorer("Beta is in b.rs.")},
        {"when": "*", "turns": [
            {"tool_calls": [
                {"name": "explore", "arguments": {"task": "where is alpha"}},
                {"name": "explore", "arguments": {"task": "where is beta"}}
            ]},
            {"text": "Both found."}
        ]}
    ]})
    .to_string();
    let mut h = Harness::new(&script).await;
    h.say("find both").await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    assert_eq!(h.reads.calls(), 2);
    assert_eq!(
        h.reads.max_active(),
        2,
        "the two explorers read at the same time"
    );
    h.idle().await;
    let results: Vec<String> = h
        .history()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content),
            _ => None,
        })
        .collect();
    assert!(
        results[0].contains("Alpha is in a.rs.") && results[1].contains("Beta is in b.rs."),
        "in call order: {results:?}"
    );
}
