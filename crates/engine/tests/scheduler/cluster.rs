//! Schedulers that share a database: each slot fires once, and a run a stopped process left is
//! adopted rather than repeated.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use workmate_engine::automations::{AutomationDraft, create};
use workmate_engine::{Scheduler, SchedulerConfig};
use workmate_protocol::{Actor, ApprovalChoice, UserId};
use workmate_store::{RunStatus, RunTrigger};
use workmate_test_support::Backend;

use super::{Fixture, Seen, asks_to_write, clock_at, ms, settle};
use crate::support::{Harness, Options, script};

workmate_test_support::needs! { [postgres]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_schedulers_on_one_postgres_database_fire_each_slot_once() {
        two_schedulers_on_one_database_fire_each_slot_once(Backend::Postgres).await;
    }
}

workmate_test_support::needs! { [mysql]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_schedulers_on_one_mariadb_database_fire_each_slot_once() {
        two_schedulers_on_one_database_fire_each_slot_once(Backend::Mysql).await;
    }
}

/// Two schedulers, each with its own connection pool and hub (as two processes would have), tick
/// side by side on one Postgres or MariaDB database for 200 minutes: every slot of every
/// automation fires exactly once.
async fn two_schedulers_on_one_database_fire_each_slot_once(backend: Backend) {
    let variable = backend.variable();
    let server = backend.url();
    let url = workmate_store::test_support::fresh_database(&server)
        .await
        .unwrap();
    let clock = clock_at("2026-12-01T09:00:30Z");
    let turns = json!([
        {"tool_calls": [{"name": "probe_read", "arguments": {}}]},
        {"text": "Counted."}
    ]);
    let mut processes = Vec::new();
    for _ in 0..2 {
        let connect = workmate_store::ConnectOptions {
            clock: clock.clone(),
            ..workmate_store::ConnectOptions::default()
        };
        let store = workmate_store::Store::connect(&url, connect).await.unwrap();
        store.migrate().await.unwrap();
        let dir = std::env::temp_dir().join(format!("workmate-sched-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        let options = Options {
            clock: clock.clone(),
            ..Options::default()
        };
        let h = Harness::on_store(store, dir, &script(turns.clone()), options).await;
        let scheduler = Scheduler::new(
            h.hub.clone(),
            Arc::new(Seen::default()),
            SchedulerConfig::default(),
        );
        processes.push((h, scheduler));
    }
    let (a, b) = (&processes[0], &processes[1]);
    let mut ids = Vec::new();
    for title in ["Sync one", "Sync two", "Sync three"] {
        let draft: AutomationDraft = serde_json::from_value(
            json!({"title": title, "instructions": "Count.", "cron": "* * * * *", "timezone": "UTC"}),
        )
        .unwrap();
        let owner = UserId::from("u_alice");
        ids.push(
            create(&a.0.store, &a.0.tenant, &owner, None, draft, "test")
                .await
                .unwrap()
                .id,
        );
    }
    let ticks = 200;
    let mut fired = 0;
    for _ in 0..ticks {
        clock.advance(Duration::from_secs(60));
        let (ra, rb) = tokio::join!(
            a.1.tick(RunTrigger::Schedule),
            b.1.tick(RunTrigger::Schedule)
        );
        fired += ra.unwrap().fired + rb.unwrap().fired;
        settle(&a.1).await;
        settle(&b.1).await;
    }
    let mut runs = 0;
    for id in &ids {
        let all =
            a.0.store
                .automations()
                .runs(&a.0.tenant, id, 1000)
                .await
                .unwrap();
        let mut starts: Vec<i64> = all.iter().map(|r| r.started_at_ms).collect();
        starts.dedup();
        assert_eq!(starts.len(), all.len(), "{variable}: a slot fired twice");
        assert!(
            all.iter().all(|r| r.status == RunStatus::Ok),
            "{variable}: {all:?}"
        );
        runs += all.len();
    }
    assert_eq!(runs, ids.len() * ticks, "{variable}: every slot fired");
    assert_eq!(fired, runs, "{variable}");
    assert_eq!(
        a.0.reads.calls() + b.0.reads.calls(),
        runs,
        "{variable}: each run ran once"
    );
}

/// A deploy restarts the service while a run waits on an approval: the new process adopts the
/// run once its lease lapses, the same prompt is answered, and the run ends once, not twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_left_by_a_stopped_process_is_adopted_not_repeated() {
    let f = Fixture::new(asks_to_write(), "2026-12-01T08:59:00Z").await;
    let daily = f
        .automation(json!({"title": "Write", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    f.clock.set_ms(ms("2026-12-01T09:00:10Z"));
    assert_eq!(f.tick().await.fired, 1);
    let item = f.parked_item().await;
    let (h, scheduler, seen) = restart_and_adopt(f, asks_to_write()).await;

    h.decide_as(&item, ApprovalChoice::Once, &Actor::new("u_bob"))
        .await
        .unwrap();
    settle(&scheduler).await;
    let runs = h
        .store
        .automations()
        .runs(&h.tenant, &daily.id, 10)
        .await
        .unwrap();
    assert_eq!(runs.len(), 1, "adopted, never started twice");
    assert_eq!(runs[0].status, RunStatus::Ok, "{runs:?}");
    assert_eq!(h.writes.calls(), 1);
    assert_eq!(seen.finished.lock().unwrap().len(), 1);
}

/// A deploy cuts a run's answer short: the stopping process leaves the turn open (no
/// half answer is kept), and the process that adopts the run asks the model again; it ends well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cut_short_by_a_restart_carries_on_when_adopted() {
    let slow = json!([{"text": "one two three four five six seven eight nine ten", "chunk_delay_ms": 200}]);
    let f = Fixture::new(slow, "2026-12-01T08:59:00Z").await;
    let daily = f
        .automation(json!({"title": "Digest", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    f.clock.set_ms(ms("2026-12-01T09:00:10Z"));
    assert_eq!(f.tick().await.fired, 1);
    f.streaming(&daily.id).await;
    let after = json!([{"text": "Finished after the restart."}]);
    let (h, scheduler, _) = restart_and_adopt(f, after).await;
    settle(&scheduler).await;
    let runs = h
        .store
        .automations()
        .runs(&h.tenant, &daily.id, 10)
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Ok, "{runs:?}");
    assert_eq!(
        runs[0].result_text.as_deref(),
        Some("Finished after the restart.")
    );
}

/// Stops the fixture's process as a deploy would (scheduler, then hub), starts another on the same
/// database and folder with the model answering `turns`, and lets it adopt the run once the lease
/// lapses.
async fn restart_and_adopt(
    f: Fixture,
    turns: serde_json::Value,
) -> (Harness, Scheduler, Arc<Seen>) {
    f.scheduler.shutdown().await;
    f.h.hub.shutdown().await;
    let Fixture { mut h, clock, .. } = f;
    h.keep_files();
    let (dir, session) = (h.dir.clone(), h.session.clone());
    drop(h);

    let options = Options {
        clock: clock.clone(),
        ..Options::default()
    };
    let h = Harness::reopen(dir, session, &script(turns), options).await;
    h.hub.resume_pending().await.unwrap();
    let seen = Arc::new(Seen::default());
    let scheduler = Scheduler::new(h.hub.clone(), seen.clone(), SchedulerConfig::default());
    let report = scheduler.tick(RunTrigger::Schedule).await.unwrap();
    assert_eq!(
        (report.fired, report.adopted),
        (0, 0),
        "the lease still holds"
    );
    clock.advance(SchedulerConfig::default().lease() + Duration::from_secs(1));
    let report = scheduler.tick(RunTrigger::Schedule).await.unwrap();
    assert_eq!((report.fired, report.adopted), (0, 1));
    (h, scheduler, seen)
}
