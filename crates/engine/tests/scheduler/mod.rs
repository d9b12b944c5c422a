//! The scheduler with a fixed clock: catch-up, overlap, parked runs, one-offs, DST, standing
//! rules, manual runs; and several schedulers on one database.

mod cluster;
mod fixture;
mod prompts;

use std::time::Duration;

use serde_json::json;
use workmate_protocol::{Actor, ApprovalChoice, Surface, UserId};
use workmate_store::{RunStatus, RunTrigger};
use workmate_tools::automations::AutomationSettings;

use crate::support::PATIENCE;

pub use fixture::{Fixture, Seen, asks_to_write, clock_at, done, ms, settle};

#[tokio::test]
async fn a_long_downtime_is_caught_up_by_one_run() {
    let f = Fixture::new(done(), "2026-12-01T08:00:00Z").await;
    let daily = f
        .automation(json!({"title": "Digest", "cron": "0 9 * * *", "timezone": "UTC"}))
        .await;
    assert_eq!(daily.next_run_ms, Some(ms("2026-12-01T09:00:00Z")));

    // The service was down for four days and five slots.
    f.clock.set_ms(ms("2026-12-05T12:00:00Z"));
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

    f.h.decide_as(&item, ApprovalChoice::Once, &Actor::new("u_bob"))
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
    f.clock.set_ms(ms("2026-12-01T09:00:10Z"));
    assert_eq!(f.tick().await.fired, 1);
    f.parked_item().await;

    f.clock.set_ms(ms("2026-12-01T10:00:10Z"));
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
    f.clock.set_ms(ms("2026-12-01T08:29:00Z"));
    assert_eq!(f.tick().await.fired, 0, "not yet");
    f.clock.set_ms(ms("2026-12-01T08:31:00Z"));
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
    f.clock.set_ms(ms("2026-12-01T09:00:10Z"));
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
    f.h.decide_as(&item, ApprovalChoice::AlwaysTask, &Actor::new("u_bob"))
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
    f.clock.set_ms(ms("2026-12-02T09:00:10Z"));
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
    f.clock.set_ms(ms("2026-12-01T09:00:10Z"));
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
