//! Self-wake: timer, job-completion and event wakes resume their session on the tick, a busy
//! session gets the wake as steering, and wakes survive a restart.

use std::time::Duration;

use serde_json::json;
use workmate_engine::{NoObserver, Scheduler, SchedulerConfig};
use workmate_protocol::{Actor, ApprovalChoice, Message, SessionId};
use workmate_store::{NewWake, RunTrigger, WakeKind};

use crate::scheduler::{Fixture, clock_at, ms};
use crate::support::{Harness, Options, script};

fn timer(session: &SessionId, fire_at_ms: i64) -> NewWake {
    NewWake {
        session_id: session.clone(),
        kind: WakeKind::Timer,
        fire_at_ms: Some(fire_at_ms),
        job_id: None,
        event_key: None,
        note: "check the release build".into(),
    }
}

fn user_texts(history: &[Message]) -> Vec<String> {
    history
        .iter()
        .filter_map(|m| match m {
            Message::User { content, .. } => Some(serde_json::to_string(content).unwrap()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_timer_wake_starts_a_turn_when_its_time_comes_and_only_once() {
    let f = Fixture::new(
        json!([{"text": "The build is green."}]),
        "2026-12-01T09:00:00Z",
    )
    .await;
    let at = f.h.store.clock_ms() + 3_600_000;
    f.h.store
        .wakes()
        .create(&f.h.tenant, &timer(&f.h.session, at))
        .await
        .unwrap();
    assert_eq!(f.tick().await.woken, 0, "not yet");
    f.clock.advance(Duration::from_secs(3600));
    assert_eq!(f.tick().await.woken, 1);
    f.h.idle().await;
    assert_eq!(f.tick().await.woken, 0, "a wake fires once");
    let history = f.h.history().await;
    let texts = user_texts(&history);
    assert_eq!(texts.len(), 1);
    assert!(
        texts[0].contains("the timer you set has fired (note: check the release build)"),
        "{texts:?}"
    );
    assert!(
        matches!(history.last(), Some(Message::Assistant { content, .. }) if content == "The build is green.")
    );
    assert!(
        f.h.store
            .wakes()
            .pending(&f.h.tenant, &f.h.session)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_completion_wake_fires_when_the_run_it_waits_on_ends() {
    let mut f = Fixture::new(
        json!([
            {"tool_calls": [{"name": "probe_write", "arguments": {"path": "digest.md"}}]},
            {"text": "Done."}
        ]),
        "2026-12-01T08:59:00Z",
    )
    .await;
    let daily = f
        .automation(json!({"title": "Digest", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    f.clock.set_ms(ms("2026-12-01T09:00:10Z"));
    f.tick().await;
    let item = f.parked_item().await;
    let run = f.runs(&daily.id).await.remove(0);
    let wake = NewWake {
        session_id: f.h.session.clone(),
        kind: WakeKind::Completion,
        fire_at_ms: None,
        job_id: Some(run.id.as_str().to_owned()),
        event_key: None,
        note: String::new(),
    };
    f.h.store.wakes().create(&f.h.tenant, &wake).await.unwrap();
    assert_eq!(f.tick().await.woken, 0, "the run is still going");

    f.h.decide_as(&item, ApprovalChoice::Once, &Actor::new("u_bob"))
        .await
        .unwrap();
    f.settle().await;
    assert_eq!(f.tick().await.woken, 1);
    // The woken turn follows the same script, so it parks on its own write: the wake got in.
    f.h.parked().await;
    let texts = user_texts(&f.h.history().await);
    assert!(
        texts[0].contains(&format!(
            "the job `{}` you were waiting on has completed",
            run.id
        )),
        "{texts:?}"
    );
}

#[tokio::test]
async fn an_event_wake_fires_when_its_event_is_signalled() {
    let f = Fixture::new(
        json!([{"text": "Deployed; smoke tests next."}]),
        "2026-12-01T09:00:00Z",
    )
    .await;
    let wake = NewWake {
        session_id: f.h.session.clone(),
        kind: WakeKind::Event,
        fire_at_ms: None,
        job_id: None,
        event_key: Some("deploy.done".into()),
        note: "run the smoke tests".into(),
    };
    f.h.store.wakes().create(&f.h.tenant, &wake).await.unwrap();
    assert_eq!(f.tick().await.woken, 0);
    assert_eq!(
        f.h.store
            .wakes()
            .fire_event(&f.h.tenant, "deploy.other")
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        f.h.store
            .wakes()
            .fire_event(&f.h.tenant, "deploy.done")
            .await
            .unwrap(),
        1
    );
    assert_eq!(f.tick().await.woken, 1);
    f.h.idle().await;
    let texts = user_texts(&f.h.history().await);
    assert!(
        texts[0].contains("the event `deploy.done` you were waiting for has fired"),
        "{texts:?}"
    );
}

#[tokio::test]
async fn a_busy_session_gets_its_wake_as_steering() {
    let mut f = Fixture::new(
        json!([
            {"tool_calls": [{"name": "probe_write", "arguments": {"path": "notes.md"}}]},
            {"text": "Saved, and the timer is noted."}
        ]),
        "2026-12-01T09:00:00Z",
    )
    .await;
    f.h.say("save my notes").await;
    let item = f.h.parked().await;
    let at = f.h.store.clock_ms();
    f.h.store
        .wakes()
        .create(&f.h.tenant, &timer(&f.h.session, at))
        .await
        .unwrap();
    assert_eq!(f.tick().await.woken, 1);
    f.h.decide(&item, ApprovalChoice::Once).await;
    f.h.idle().await;
    let history = f.h.history().await;
    let texts = user_texts(&history);
    assert_eq!(texts.len(), 2, "one turn: the message and the steering");
    assert!(
        texts[1].contains("the timer you set has fired"),
        "{texts:?}"
    );
    assert!(
        matches!(history.last(), Some(Message::Assistant { content, .. }) if content == "Saved, and the timer is noted.")
    );
}

#[tokio::test]
async fn a_wake_set_before_a_restart_fires_after_it() {
    let clock = clock_at("2026-12-01T09:00:00Z");
    let options = || Options {
        clock: clock.clone(),
        ..Options::default()
    };
    let turns = script(json!([{"text": "Back, and checking."}]));
    let (dir, session) = {
        let mut h = Harness::with(&turns, options()).await;
        let at = h.store.clock_ms() + 60_000;
        h.store
            .wakes()
            .create(&h.tenant, &timer(&h.session, at))
            .await
            .unwrap();
        h.keep_files();
        (h.dir.clone(), h.session.clone())
    };
    clock.advance(Duration::from_secs(120));
    let h = Harness::reopen(dir, session, &turns, options()).await;
    let scheduler = Scheduler::new(
        h.hub.clone(),
        std::sync::Arc::new(NoObserver),
        SchedulerConfig::default(),
    );
    let report = scheduler.tick(RunTrigger::Catchup).await.unwrap();
    assert_eq!(report.woken, 1);
    h.idle().await;
    let texts = user_texts(&h.history().await);
    assert!(
        texts[0].contains("the timer you set has fired"),
        "{texts:?}"
    );
}
