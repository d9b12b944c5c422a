//! The tenant's gateway policy in turns: fallback when a model is down, usage recorded per call,
//! and daily budgets that stop new turns until the next day.

use serde_json::json;
use workmate_protocol::{Actor, Command, EventKind, TurnEndStatus};
use workmate_store::UsageGroup;

use crate::support::{CLOCK, Harness, script};

#[tokio::test]
async fn a_down_model_falls_back_to_the_next_and_says_so() {
    let mut h = Harness::new(&script(
        json!([{"text": "Answered by the fallback.", "usage": {"input": 5, "output": 4}}]),
    ))
    .await;
    let settings = json!({"gateway": {"fallback": ["scripted:test"], "retries": 1}});
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
    h.command(Command::SwitchModel {
        model: "down:x".into(),
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    h.say("hello").await;
    let events = h.turn_events().await;
    let fallback = events.iter().find_map(|e| match &e.kind {
        EventKind::ModelFallback { from, to, reason } => {
            Some((from.clone(), to.clone(), reason.clone()))
        }
        _ => None,
    });
    let (from, to, reason) = fallback.expect("a model_fallback event");
    assert_eq!((from.as_str(), to.as_str()), ("down:x", "scripted:test"));
    assert!(reason.contains("503"), "{reason}");
    assert_eq!(
        h.down.calls.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one try and one retry before moving on"
    );
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd {
            status: TurnEndStatus::Completed,
            ..
        }
    ));
    let usage = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::AssistantMessage { usage, .. } => usage.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        usage.model, "scripted:test",
        "usage names the model that answered"
    );
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        record.model, "down:x",
        "the session's own model is unchanged"
    );
}

#[tokio::test]
async fn without_a_fallback_an_overloaded_model_ends_the_turn_with_its_error() {
    let mut h = Harness::new(&script(json!([]))).await;
    h.store
        .tenants()
        .set_settings(&h.tenant, &json!({"gateway": {"retries": 0}}))
        .await
        .unwrap();
    h.command(Command::SwitchModel {
        model: "down:x".into(),
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    h.say("hello").await;
    let events = h.turn_events().await;
    assert!(
        matches!(&events.last().unwrap().kind, EventKind::Error { error_type, .. } if error_type == "provider_unavailable")
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::ModelFallback { .. }))
    );
}

#[tokio::test]
async fn usage_is_recorded_and_a_spent_budget_stops_new_turns_until_the_next_day() {
    let turns = json!([
        {"text": "one", "usage": {"input": 8, "output": 5}},
        {"text": "two", "usage": {"input": 1, "output": 1}}
    ]);
    let mut h = Harness::new(&script(turns)).await;
    h.store
        .tenants()
        .set_settings(
            &h.tenant,
            &json!({"gateway": {"daily_tokens_per_user": 10}}),
        )
        .await
        .unwrap();
    h.say("first").await;
    h.turn_events().await;
    h.idle().await;
    let totals = h
        .store
        .usage()
        .totals(&h.tenant, 0, i64::MAX, UsageGroup::User)
        .await
        .unwrap();
    assert_eq!(
        (totals[0].key.as_str(), totals[0].input, totals[0].output),
        ("u_alice", 8, 5)
    );

    h.say("second").await;
    let events = h.turn_events().await;
    let EventKind::Error {
        error, error_type, ..
    } = &events.last().unwrap().kind
    else {
        panic!("budget error")
    };
    assert_eq!(error_type, "quota_exceeded");
    assert!(
        error.contains("13 of 10 tokens") && error.contains("midnight UTC"),
        "{error}"
    );
    h.idle().await;

    CLOCK.advance(24 * 60 * 60 * 1000);
    h.command(Command::Retry {
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    let events = h.turn_events().await;
    assert!(
        matches!(events.last().unwrap().kind, EventKind::TurnEnd { .. }),
        "a new day, a new budget"
    );
}

#[tokio::test]
async fn a_sensitive_tenant_only_ever_reaches_its_private_model() {
    let mut h = Harness::new(&script(json!([{"text": "private answer"}]))).await;
    let settings = json!({"gateway": {"sensitive": true, "private_model": "scripted:private", "fallback": ["down:x"]}});
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
    h.say("confidential question").await;
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    assert_eq!(h.model.requests().last().unwrap().model, "private");

    h.store
        .tenants()
        .set_settings(&h.tenant, &json!({"gateway": {"sensitive": true}}))
        .await
        .unwrap();
    h.say("again").await;
    let events = h.turn_events().await;
    let EventKind::Error { error, .. } = &events.last().unwrap().kind else {
        panic!("refused")
    };
    assert!(error.contains("private_model"), "{error}");
}

#[tokio::test]
async fn a_persona_route_picks_the_model() {
    let mut h = Harness::new(&script(json!([{"text": "routed"}]))).await;
    let settings =
        json!({"gateway": {"routes": [{"persona": "cowork", "model": "scripted:small"}]}});
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
    h.say("hi").await;
    h.turn_events().await;
    assert_eq!(h.model.requests().last().unwrap().model, "small");
}

#[tokio::test]
async fn over_the_request_rate_a_call_waits_and_a_stop_ends_the_wait() {
    let mut h = Harness::new(&script(json!([
        {"tool_calls": [{"name": "probe_read", "arguments": {}}]},
        {"text": "never reached"}
    ])))
    .await;
    h.store
        .tenants()
        .set_settings(&h.tenant, &json!({"gateway": {"requests_per_minute": 1}}))
        .await
        .unwrap();
    h.say("go").await;
    h.events_until(|e| matches!(e.kind, EventKind::IterationEnd { .. }))
        .await;
    // The second model call of the turn waits for the minute to pass.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(h.model.requests().len(), 1, "the second call is held back");
    h.command(Command::Interrupt {
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::Interrupted { .. }
    ));
}
