//! The scheduler tests' fixture: a fixed clock, an observer that remembers, a hub with its
//! scheduler, and scripted runs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use workmate_engine::automations::{AutomationDraft, create};
use workmate_engine::{ObserverFuture, RunObserver, Scheduler, SchedulerConfig};
use workmate_protocol::{AutomationId, UserId};
use workmate_store::{Automation, AutomationRun, InboxFilter, InboxItemState, RunTrigger};

use crate::support::{Harness, Options, PATIENCE, script};

/// The shared hand-moved clock, set in RFC 3339 here.
pub type FixedClock = workmate_store::test_support::ManualClock;

/// A clock standing at `rfc3339`.
pub fn clock_at(rfc3339: &str) -> Arc<FixedClock> {
    FixedClock::at_ms(ms(rfc3339))
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
        let clock = clock_at(now);
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
            "test",
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

    /// Waits until the automation's run has an answer streaming in its session.
    pub async fn streaming(&self, id: &AutomationId) {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let run = self.runs(id).await.into_iter().next();
            if let Some(run) = run.filter(|r| !r.session_id.as_str().is_empty()) {
                let mut events = self
                    .h
                    .hub
                    .subscribe(&self.h.tenant, &run.session_id)
                    .await
                    .unwrap();
                loop {
                    let event = tokio::time::timeout(PATIENCE, events.recv())
                        .await
                        .unwrap()
                        .unwrap();
                    if matches!(
                        event.kind,
                        workmate_protocol::EventKind::AssistantDelta { .. }
                    ) {
                        return;
                    }
                }
            }
            assert!(std::time::Instant::now() < deadline, "no run started");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
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

pub fn done() -> serde_json::Value {
    json!([{"text": "Digest posted."}])
}

/// A run that asks to write (an external-class call here), so it parks an approval.
pub fn asks_to_write() -> serde_json::Value {
    json!([
        {"tool_calls": [{"name": "probe_write", "arguments": {"path": "reports/digest.md"}}]},
        {"text": "Digest written."}
    ])
}
