//! Event order, the iteration cap, failures and retry.

use serde_json::json;
use workmate_engine::Accepted;
use workmate_protocol::{
    Actor, Command, EventKind, Message, NoticeKind, ToolStatus, TurnEndStatus,
};

use crate::support::{Harness, Options, names, script, state_names};

#[tokio::test]
async fn a_plain_turn_streams_then_ends() {
    let mut h = Harness::new(&script(
        json!([{"text": "Here is the brief for this week."}]),
    ))
    .await;
    assert!(matches!(
        h.say("summarise this week").await,
        Accepted::TurnStarted(_)
    ));
    let events = h.turn_events().await;
    let mut expected = vec!["turn_start"];
    expected.extend(["assistant_delta"; 7]); // one per word
    expected.extend(["assistant_message", "turn_end"]);
    assert_eq!(names(&events), expected);
    let deltas: String = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AssistantDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "Here is the brief for this week.");
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd {
            status: TurnEndStatus::Completed,
            iterations: 1
        }
    ));
    // State events carry consecutive sequence numbers; deltas carry the latest state seq.
    let seqs: Vec<u64> = events
        .iter()
        .filter(|e| e.kind.is_state())
        .map(|e| e.seq)
        .collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    assert!(events.iter().all(|e| e.turn_id == events[0].turn_id));
    h.idle().await;
    let history = h.history().await;
    assert!(matches!(&history[0], Message::User { .. }));
    assert!(
        matches!(&history[1], Message::Assistant { content, .. } if content == "Here is the brief for this week.")
    );
    // Replay from the store gives the same state events.
    let stored = h
        .store
        .events()
        .list_after(&h.tenant, &h.session, 0, 100)
        .await
        .unwrap();
    assert_eq!(
        state_names(&stored[1..]),
        state_names(&events),
        "after session_created"
    );
}

#[tokio::test]
async fn a_tool_turn_runs_the_tool_then_answers() {
    let mut h = Harness::new(&script(json!([
        {"text": "Looking.", "tool_calls": [{"name": "probe_read", "arguments": {"ms": 1}}]},
        {"text": "Done."}
    ])))
    .await;
    h.say("look around").await;
    let events = h.turn_events().await;
    assert_eq!(
        state_names(&events),
        vec![
            "turn_start",
            "assistant_message",
            "tool_proposed",
            "tool_started",
            "tool_finished",
            "iteration_end",
            "assistant_message",
            "turn_end"
        ]
    );
    let finished = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolFinished {
                status,
                result_preview,
                ..
            } => Some((*status, result_preview.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished, (ToolStatus::Ok, Some("{\"slept_ms\":1}".into())));
    h.idle().await;
    let history = h.history().await;
    let roles: Vec<&str> = history.iter().map(Message::role).collect();
    assert_eq!(roles, vec!["user", "assistant", "tool", "assistant"]);
    assert_eq!(h.reads.calls(), 1);
}

#[tokio::test]
async fn the_iteration_cap_ends_the_turn() {
    let looping: Vec<_> = (0..5)
        .map(|_| json!({"tool_calls": [{"name": "probe_read", "arguments": {}}]}))
        .collect();
    let mut h = Harness::with(
        &script(json!(looping)),
        Options {
            max_iterations: 3,
            ..Options::default()
        },
    )
    .await;
    h.say("loop").await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd {
            status: TurnEndStatus::MaxIterationsExceeded,
            iterations: 3
        }
    ));
    assert_eq!(
        state_names(&events)
            .iter()
            .filter(|n| **n == "assistant_message")
            .count(),
        3,
        "exactly the cap's model calls"
    );
    assert_eq!(h.reads.calls(), 3);
}

#[tokio::test]
async fn mangled_arguments_are_answered_with_a_diagnosis_and_never_run() {
    let mut h = Harness::new(&script(json!([
        {"tool_calls": [{"name": "probe_read", "raw_arguments": "{\"ms\": 1"}]},
        {"tool_calls": [{"name": "probe_read", "raw_arguments": "{\"ms\": "}], "finish_reason": "length"},
        {"text": "ok"}
    ]))).await;
    h.say("go").await;
    let events = h.turn_events().await;
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolFinished {
                status: ToolStatus::Error,
                reason,
                ..
            } => reason.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2);
    assert!(reasons[0].contains("not a JSON object"), "{}", reasons[0]);
    assert!(reasons[1].contains("output-token limit"), "{}", reasons[1]);
    assert_eq!(h.reads.calls(), 0);
}

#[tokio::test]
async fn long_unparsed_arguments_are_cut_in_history() {
    let raw = "x".repeat(1000);
    let mut h = Harness::new(&script(
        json!([{"tool_calls": [{"name": "probe_read", "raw_arguments": raw}]}, {"text": "ok"}]),
    ))
    .await;
    h.say("go").await;
    h.turn_events().await;
    h.idle().await;
    let history = h.history().await;
    let Message::Assistant { tool_calls, .. } = &history[1] else {
        panic!("assistant second")
    };
    let kept = tool_calls[0].raw_arguments().unwrap();
    assert!(
        kept.ends_with("[unparsed tool-call text, 1000 chars, truncated in history]"),
        "{kept}"
    );
}

#[tokio::test]
async fn the_display_sidecar_is_kept_from_the_model_and_its_counts_audited() {
    let mut h = Harness::new(&script(json!([{"tool_calls": [{"name": "probe_read", "arguments": {"hide": true}}]}, {"text": "ok"}]))).await;
    h.say("search mail").await;
    let events = h.turn_events().await;
    let display = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolFinished { display, .. } => display.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(display["hidden_by_filters"], 2);
    h.idle().await;
    let history = h.history().await;
    let Message::Tool {
        content, display, ..
    } = &history[2]
    else {
        panic!("tool third")
    };
    assert!(
        !content.contains("_display") && !content.contains("hidden"),
        "the model never learns: {content}"
    );
    assert_eq!(display.as_ref().unwrap()["hidden_fields"], 1);
    let audit = h.store.audit().recent(&h.tenant, 10).await.unwrap();
    let filtered = audit
        .iter()
        .find(|r| r.stage == "filtered")
        .expect("a filtered record");
    assert_eq!(
        filtered.detail["reason"],
        "2 result(s) hidden · 1 field value(s) stripped by privacy filters"
    );
}

#[tokio::test]
async fn a_failed_turn_can_be_retried() {
    let mut h = Harness::new(&script(
        json!([{"text": "Partial ", "fail_with": "upstream overloaded"}, {"text": "Recovered."}]),
    ))
    .await;
    h.say("hi").await;
    let events = h.turn_events().await;
    let EventKind::Error { error, .. } = &events.last().unwrap().kind else {
        panic!("ends in error")
    };
    assert_eq!(error, "upstream overloaded");
    h.idle().await;
    let history = h.history().await;
    assert!(
        matches!(&history[1], Message::Assistant { content, tool_calls, .. } if content == "Partial " && tool_calls.is_empty()),
        "partial text kept"
    );
    assert!(matches!(
        &history[2],
        Message::Notice {
            kind: NoticeKind::Error,
            ..
        }
    ));

    assert!(matches!(
        h.command(Command::Retry {
            actor: Actor::new("u_alice")
        })
        .await
        .unwrap(),
        Accepted::TurnStarted(_)
    ));
    let events = h.turn_events().await;
    assert!(matches!(&events[0].kind, EventKind::TurnStart { input, .. } if input.is_empty()));
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    h.idle().await;
    let err = h
        .command(Command::Retry {
            actor: Actor::new("u_alice"),
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nothing to retry"), "{err}");
}

#[tokio::test]
async fn notices_and_sidecars_are_stored_but_never_sent_to_the_model() {
    let mut h = Harness::new(&script(json!([
        {"fail_with": "boom"},
        {"reasoning": "thinking", "tool_calls": [{"name": "probe_read", "arguments": {"hide": true}}]},
        {"text": "fine"}
    ]))).await;
    h.say("hi").await;
    h.turn_events().await;
    h.idle().await;
    h.say("again").await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    h.idle().await;
    assert!(h.history().await.iter().any(|m| matches!(
        m,
        Message::Notice {
            kind: NoticeKind::Error,
            ..
        }
    )));
    let requests = h.model.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.model, "test", "the provider prefix is stripped");
        let sent = serde_json::to_string(&request.messages).unwrap();
        for private in [
            "\"notice\"",
            "_display",
            "\"reasoning\"",
            "\"usage\"",
            "\"author\"",
        ] {
            assert!(!sent.contains(private), "{private} leaked into {sent}");
        }
        assert!(request.tools.iter().any(|t| t.name == "ask_user"));
    }
}
