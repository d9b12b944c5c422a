//! The scheduler with a fixed clock: catch-up, overlap, parked runs, one-offs, DST, standing
//! rules, and two schedulers on one database.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use workmate_engine::{ObserverFuture, RunObserver, Scheduler, SchedulerConfig};
use workmate_protocol::{Actor, ApprovalChoice, AutomationId, Resolution, Surface, UserId};
use workmate_store::{
    Automation, AutomationRun, Clock, InboxFilter, InboxItemState, RunStatus, RunTrigger,
};
use workmate_tools::automations::{AutomationDraft, AutomationSettings, create};

use crate::support::{Harness, Options, PATIENCE, script};

/// A clock tests set by hand.
#[derive(Debug)]
pub struct FixedClock(AtomicI64);

impl FixedClock {
    pub fn at(rfc3339: &str) -> Arc<Self> {
        Arc::new(Self(AtomicI64::new(ms(rfc3339))))
    }
    pub fn set(&self, rfc3339: &str) {
        self.0.store(ms(rfc3339), Ordering::SeqCst);
    }
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap();
        self.0.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

pub fn ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

/// Remembers what the scheduler told the chat surfaces.
#[derive(Debug, Default)]
pub struct Seen {
    pub started: Mutex<Vec<AutomationRun>>,
    pub finished: Mutex<Vec<AutomationRun>>,
}

impl RunObserver for Seen {
    fn run_started<'a>(&'a self, _: &'a Automation, run: &'a AutomationRun) -> ObserverFuture<'a> {
        self.started.lock().unwrap().push(run.clone());
        Box::pin(async {})
    }
    fn run_finished<'a>(&'a self, _: &'a Automation, run: &'a AutomationRun) -> ObserverFuture<'a> {
        self.finished.lock().unwrap().push(run.clone());
        Box::pin(async {})
    }
}

pub struct Fixture {
    pub h: Harness,
    pub clock: Arc<FixedClock>,
    pub seen: Arc<Seen>,
    pub scheduler: Scheduler,
}

impl Fixture {
    pub async fn new(turns: serde_json::Value, now: &str) -> Self {
        let clock = FixedClock::at(now);
        let options = Options {
            clock: clock.clone(),
            ..Options::default()
        };
        let h = Harness::with(&script(turns), options).await;
        let seen = Arc::new(Seen::default());
        let scheduler = Scheduler::new(h.hub.clone(), seen.clone(), SchedulerConfig::default());
        Self {
            h,
            clock,
            seen,
            scheduler,
        }
    }

    pub async fn automation(&self, draft: serde_json::Value) -> Automation {
        let mut draft: AutomationDraft = serde_json::from_value(draft).unwrap();
        if draft.instructions.is_empty() {
            draft.instructions = "Post the sales digest.".into();
        }
        create(
            &self.h.store,
            &self.h.tenant,
            &UserId::from("u_alice"),
            None,
            draft,
        )
        .await
        .unwrap()
    }

    pub async fn tick(&self) -> workmate_engine::TickReport {
        self.scheduler.tick(RunTrigger::Schedule).await.unwrap()
    }

    /// Waits (in real time, briefly) until this process drives no run.
    pub async fn settle(&self) {
        settle(&self.scheduler).await;
    }

    pub async fn runs(&self, id: &AutomationId) -> Vec<AutomationRun> {
        self.h
            .store
            .automations()
            .runs(&self.h.tenant, id, 1000)
            .await
            .unwrap()
    }

    pub async fn get(&self, id: &AutomationId) -> Automation {
        self.h
            .store
            .automations()
            .get(&self.h.tenant, id)
            .await
            .unwrap()
            .unwrap()
    }

    /// Waits until the run has parked a prompt, and returns the item's id.
    pub async fn parked_item(&self) -> workmate_protocol::InboxItemId {
        let filter = InboxFilter {
            state: Some(InboxItemState::Pending),
            ..InboxFilter::default()
        };
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let items = self
                .h
                .store
                .inbox()
                .list(&self.h.tenant, &filter, 10)
                .await
                .unwrap();
            if let Some(item) = items.into_iter().next() {
                return item.id;
            }
            assert!(std::time::Instant::now() < deadline, "no prompt parked");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

pub async fn settle(scheduler: &Scheduler) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while scheduler.running() > 0 {
        assert!(std::time::Instant::now() < deadline, "runs did not end");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn done() -> serde_json::Value {
    json!([{"text": "Digest posted."}])
}

/// A run that asks to write (an external-class call here), so it parks an approval.
fn asks_to_write() -> serde_json::Value {
    json!([
        {"tool_calls": [{"name": "probe_write", "arguments": {"path": "reports/digest.md"}}]},
        {"text": "Digest written."}
    ])
}

#[tokio::test]
async fn a_long_downtime_is_caught_up_by_one_run() {
    let f = Fixture::new(done(), "2026-12-01T08:00:00Z").await;
    let daily = f
        .automation(json!({"title": "Digest", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    assert_eq!(daily.next_run_ms, Some(ms("2026-12-01T09:00:00Z")));

    // The service was down for four days and five slots.
    f.clock.set("2026-12-05T12:00:00Z");
    let report = f.scheduler.tick(RunTrigger::Catchup).await.unwrap();
    assert_eq!((report.due, report.fired), (1, 1));
    f.settle().await;
    let again = f.tick().await;
    assert_eq!(again.fired, 0, "missed slots collapse into one run");

    let runs = f.runs(&daily.id).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].trigger, RunTrigger::Catchup);
    assert_eq!(runs[0].status, RunStatus::Ok);
    assert_eq!(runs[0].result_text.as_deref(), Some("Digest posted."));
    let after = f.get(&daily.id).await;
    assert_eq!(after.next_run_ms, Some(ms("2026-12-06T09:00:00Z")));
    assert_eq!((after.run_count, after.running_run_id), (1, None));
    assert_eq!(f.seen.finished.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_run_still_going_is_skipped_without_advancing() {
    let f = Fixture::new(asks_to_write(), "2026-12-01T09:00:30Z").await;
    let minutely = f
        .automation(json!({"title": "Sync", "cron": "* * * * *", "timezone": "UTC"}))
        .await;
    f.clock.advance(Duration::from_secs(60));
    assert_eq!(f.tick().await.fired, 1);
    let item = f.parked_item().await;
    let due_at = f.get(&minutely.id).await.next_run_ms;
    for _ in 0..5 {
        f.clock.advance(Duration::from_secs(60));
        let report = f.tick().await;
        assert_eq!(
            (report.fired, report.renewed),
            (0, 1),
            "the going run holds it"
        );
    }
    assert_eq!(
        f.get(&minutely.id).await.next_run_ms,
        due_at,
        "not advanced"
    );
    assert_eq!(f.runs(&minutely.id).await.len(), 1);

    let once = Resolution::Approval {
        choice: ApprovalChoice::Once,
    };
    f.h.hub
        .resolve(
            &f.h.tenant,
            &item,
            &once,
            &Actor::new("u_bob"),
            Surface::Http,
        )
        .await
        .unwrap();
    f.settle().await;
    let after = f.get(&minutely.id).await;
    assert_eq!(after.run_count, 1);
    assert!(after.next_run_ms > due_at, "advanced once the run ended");
}

#[tokio::test]
async fn a_run_parked_on_an_approval_delays_no_other_automation() {
    let f = Fixture::new(asks_to_write(), "2026-12-01T08:59:00Z").await;
    let parked = f
        .automation(json!({"title": "Write", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    let other = f
        .automation(json!({"title": "Later", "cron": "0 10 * * *", "timezone": "UTC"}))
        .await;
    f.clock.set("2026-12-01T09:00:10Z");
    assert_eq!(f.tick().await.fired, 1);
    f.parked_item().await;

    f.clock.set("2026-12-01T10:00:10Z");
    assert_eq!(f.tick().await.fired, 1, "the parked run blocks nothing");
    // The second automation's run parks too (same script); both wait side by side.
    let deadline = std::time::Instant::now() + PATIENCE;
    while f
        .runs(&other.id)
        .await
        .first()
        .map(|r| r.session_id.as_str().is_empty())
        != Some(false)
    {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(f.scheduler.running(), 2);
    assert_eq!(f.runs(&parked.id).await[0].status, RunStatus::Running);
}

#[tokio::test]
async fn a_one_off_fires_once() {
    let f = Fixture::new(done(), "2026-12-01T08:00:00Z").await;
    let once = f
        .automation(json!({"title": "Reminder", "fire_at": "2026-12-01T09:30", "timezone": "Europe/Berlin"}))
        .await;
    assert_eq!(once.next_run_ms, Some(ms("2026-12-01T09:30:00+01:00")));
    f.clock.set("2026-12-01T08:29:00Z");
    assert_eq!(f.tick().await.fired, 0, "not yet");
    f.clock.set("2026-12-01T08:31:00Z");
    assert_eq!(f.tick().await.fired, 1);
    f.settle().await;
    for _ in 0..3 {
        f.clock.advance(Duration::from_secs(3600));
        assert_eq!(f.tick().await.fired, 0);
    }
    let after = f.get(&once.id).await;
    assert_eq!((after.run_count, after.next_run_ms), (1, None));
}

/// Ticks every half hour over both of 2026's DST changes in New York; a daily 02:30 and a daily
/// 01:30 run exactly once per local day.
#[tokio::test]
async fn dst_changes_neither_skip_nor_double_a_daily_run() {
    for start in ["2026-03-06T12:00:00-05:00", "2026-10-30T12:00:00-04:00"] {
        let days_count = 4;
        let f = Fixture::new(done(), start).await;
        let gap = f
            .automation(
                json!({"title": "Gap", "cron": "30 2 * * *", "timezone": "America/New_York"}),
            )
            .await;
        let fold = f
            .automation(
                json!({"title": "Fold", "cron": "30 1 * * *", "timezone": "America/New_York"}),
            )
            .await;
        for _ in 0..(days_count * 48) {
            f.clock.advance(Duration::from_secs(30 * 60));
            f.tick().await;
            f.settle().await;
        }
        for automation in [&gap, &fold] {
            let runs = f.runs(&automation.id).await;
            let mut days: Vec<String> =
                runs.iter().map(|r| new_york_day(r.started_at_ms)).collect();
            days.sort();
            let total = days.len();
            days.dedup();
            assert_eq!(days.len(), total, "{}: a day ran twice", automation.title);
            assert_eq!(
                total, days_count,
                "{}: one run per local day",
                automation.title
            );
        }
    }
}

fn new_york_day(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms)
        .unwrap()
        .with_timezone(&chrono_tz::America::New_York)
        .format("%Y-%m-%d")
        .to_string()
}

#[tokio::test]
async fn always_for_this_automation_and_target_mints_a_standing_rule() {
    let f = Fixture::new(asks_to_write(), "2026-12-01T08:59:00Z").await;
    let daily = f
        .automation(json!({"title": "Write", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    f.clock.set("2026-12-01T09:00:10Z");
    f.tick().await;
    let item = f.parked_item().await;
    let parked =
        f.h.store
            .inbox()
            .get(&f.h.tenant, &item)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(
        parked.visibility,
        workmate_protocol::Visibility::Inbox,
        "runs are unattended"
    );
    let choices = parked.data["choices"].as_array().unwrap();
    assert!(choices.contains(&json!("always_task")), "{choices:?}");
    let always = Resolution::Approval {
        choice: ApprovalChoice::AlwaysTask,
    };
    f.h.hub
        .resolve(
            &f.h.tenant,
            &item,
            &always,
            &Actor::new("u_bob"),
            Surface::Slack,
        )
        .await
        .unwrap();
    f.settle().await;
    let settings = AutomationSettings::from_json(&f.get(&daily.id).await.settings);
    assert_eq!(settings.standing_rules.len(), 1);
    assert_eq!(
        settings.standing_rules[0].entry(),
        "probe_write reports/digest.md"
    );

    // The next run writes the same target without asking.
    f.clock.set("2026-12-02T09:00:10Z");
    assert_eq!(f.tick().await.fired, 1);
    f.settle().await;
    let runs = f.runs(&daily.id).await;
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].status, RunStatus::Ok, "{runs:?}");
    assert_eq!(f.h.writes.calls(), 2);
}

#[tokio::test]
async fn a_run_gets_its_instructions_unattended_and_no_scheduling_tools() {
    let f = Fixture::new(done(), "2026-12-01T08:59:00Z").await;
    let daily = f
        .automation(json!({"title": "Digest", "cron": "0 9 * * *", "timezone": "UTC", "instructions": "Summarise the merged PRs."}))
        .await;
    f.clock.set("2026-12-01T09:00:10Z");
    f.tick().await;
    f.settle().await;
    let run = f.runs(&daily.id).await.remove(0);
    let history =
        f.h.store
            .messages()
            .list(&f.h.tenant, &run.session_id)
            .await
            .unwrap();
    let workmate_protocol::Message::User { content, .. } = &history[0] else {
        panic!("a run opens with its instructions");
    };
    let text = serde_json::to_string(content).unwrap();
    assert!(text.contains("Summarise the merged PRs.") && text.contains("Scheduled run — Digest"));
    let session =
        f.h.store
            .sessions()
            .get(&f.h.tenant, &run.session_id)
            .await
            .unwrap()
            .unwrap();
    assert!(session.unattended);
    assert_eq!(session.key.surface, Surface::Scheduler);
    let offered = |i: usize| -> Vec<String> {
        f.h.model.requests()[i]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert!(
        offered(0).contains(&"probe_read".to_owned()),
        "{:?}",
        offered(0)
    );
    assert!(
        !offered(0).contains(&"probe_schedule".to_owned()),
        "scheduling tools stay out of runs"
    );

    f.h.say("what is scheduled?").await;
    f.h.idle().await;
    assert!(
        offered(1).contains(&"probe_schedule".to_owned()),
        "a chat session has them"
    );
}

#[tokio::test]
async fn a_manual_run_starts_at_once_and_refuses_overlap() {
    let f = Fixture::new(asks_to_write(), "2026-12-01T08:00:00Z").await;
    let daily = f
        .automation(json!({"title": "Write", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    let run = f
        .scheduler
        .run_now(&f.h.tenant, &daily.id, &UserId::from("u_alice"))
        .await
        .unwrap();
    assert_eq!(run.trigger, RunTrigger::Manual);
    assert!(!run.session_id.as_str().is_empty());
    let again = f
        .scheduler
        .run_now(&f.h.tenant, &daily.id, &UserId::from("u_alice"))
        .await
        .unwrap_err();
    assert!(again.to_string().contains("running now"), "{again}");
    assert_eq!(
        f.get(&daily.id).await.next_run_ms,
        Some(ms("2026-12-01T09:00:00Z"))
    );
}

/// Two schedulers, each with its own connection pool and hub (as two processes would have), tick
/// side by side on one Postgres or MariaDB database for 200 minutes: every slot of every
/// automation fires exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_schedulers_on_one_database_fire_each_slot_once() {
    for variable in ["WORKMATE_TEST_POSTGRES_URL", "WORKMATE_TEST_MYSQL_URL"] {
        let Ok(server) = std::env::var(variable) else {
            eprintln!("{variable} is not set: the two-scheduler test did not run on it");
            continue;
        };
        let url = workmate_store::test_support::fresh_database(&server)
            .await
            .unwrap();
        let clock = FixedClock::at("2026-12-01T09:00:30Z");
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
                create(&a.0.store, &a.0.tenant, &owner, None, draft)
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
}

/// A deploy restarts the service while a run waits on an approval: the new process adopts the
/// run once its lease lapses, the same prompt is answered, and the run ends once, not twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_left_by_a_stopped_process_is_adopted_not_repeated() {
    let f = Fixture::new(asks_to_write(), "2026-12-01T08:59:00Z").await;
    let daily = f
        .automation(json!({"title": "Write", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    f.clock.set("2026-12-01T09:00:10Z");
    assert_eq!(f.tick().await.fired, 1);
    let item = f.parked_item().await;
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
    let h = Harness::reopen(dir, session, &script(asks_to_write()), options).await;
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

    let once = Resolution::Approval {
        choice: ApprovalChoice::Once,
    };
    h.hub
        .resolve(&h.tenant, &item, &once, &Actor::new("u_bob"), Surface::Http)
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
