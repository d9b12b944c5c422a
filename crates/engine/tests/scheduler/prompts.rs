//! Prompts that wait long: with the tenant setting `approvals`, a prompt is announced again once
//! after `remind_after_minutes`, and dismissed as expired after `expire_after_hours` (its turn
//! goes on as if denied); both audited. The clock is moved by hand.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use workmate_engine::{ObserverFuture, RunObserver, Scheduler, SchedulerConfig};
use workmate_protocol::{Message, Resolution};
use workmate_store::{Automation, AutomationRun, InboxItem, InboxItemState};

use super::Fixture;

/// Remembers the reminders the scheduler asked for.
#[derive(Debug, Default)]
struct Reminded {
    items: Mutex<Vec<InboxItem>>,
    count: AtomicUsize,
}

impl RunObserver for Reminded {
    fn run_started<'a>(&'a self, _: &'a Automation, _: &'a AutomationRun) -> ObserverFuture<'a> {
        Box::pin(async {})
    }
    fn run_finished<'a>(&'a self, _: &'a Automation, _: &'a AutomationRun) -> ObserverFuture<'a> {
        Box::pin(async {})
    }
    fn prompt_still_waits<'a>(&'a self, item: &'a InboxItem) -> ObserverFuture<'a> {
        self.items.lock().unwrap().push(item.clone());
        self.count.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

async fn stages(f: &Fixture, stage: &str) -> usize {
    f.h.store
        .audit()
        .list(
            &f.h.tenant,
            &workmate_store::AuditQuery {
                stage: Some(stage.into()),
                ..Default::default()
            },
            1000,
        )
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn a_waiting_prompt_is_reminded_once_then_expires_and_its_turn_goes_on_denied() {
    let mut f = Fixture::new(
        json!([
            {"tool_calls": [{"name": "probe_write", "arguments": {"path": "report.md"}}]},
            {"text": "Not saved, then."}
        ]),
        "2026-12-01T09:00:00Z",
    )
    .await;
    f.h.store
        .tenants()
        .ensure(&f.h.tenant, "Acme")
        .await
        .unwrap();
    f.h.store
        .tenants()
        .set_settings(
            &f.h.tenant,
            &json!({"approvals": {"remind_after_minutes": 30, "expire_after_hours": 24}}),
        )
        .await
        .unwrap();
    let reminded = Arc::new(Reminded::default());
    let scheduler = Scheduler::new(
        f.h.hub.clone(),
        reminded.clone(),
        SchedulerConfig::default(),
    );
    let tick = || async {
        scheduler
            .tick(workmate_store::RunTrigger::Schedule)
            .await
            .unwrap()
    };

    f.h.say("save the report").await;
    let item = f.h.parked().await;

    f.clock.advance(Duration::from_secs(29 * 60));
    assert_eq!(tick().await.reminded, 0, "not yet");
    f.clock.advance(Duration::from_secs(2 * 60));
    assert_eq!(tick().await.reminded, 1);
    assert_eq!(tick().await.reminded, 0, "once");
    assert_eq!(reminded.count.load(Ordering::SeqCst), 1);
    assert_eq!(reminded.items.lock().unwrap()[0].id, item);
    assert_eq!(stages(&f, "approval_reminded").await, 1);

    f.clock.advance(Duration::from_secs(24 * 3600));
    assert_eq!(tick().await.expired, 1);
    assert_eq!(tick().await.expired, 0, "once");
    let stored =
        f.h.store
            .inbox()
            .get(&f.h.tenant, &item)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(stored.state, InboxItemState::Resolved);
    assert!(
        matches!(&stored.resolution, Some(Resolution::Dismissed { reason }) if reason.contains("expired")),
        "{stored:?}"
    );
    assert_eq!(stages(&f, "approval_expired").await, 1);
    f.h.idle().await;
    let history = f.h.history().await;
    assert!(
        matches!(history.last(), Some(Message::Assistant { content, .. }) if content == "Not saved, then."),
        "the turn went on: {history:#?}"
    );
}
