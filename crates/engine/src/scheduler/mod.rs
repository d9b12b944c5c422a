//! The scheduler: fires due automations on a tick, and resumes sessions whose wakes came due.
//!
//! Invariants:
//! - Each due slot fires once across every process: firing starts with the store's conditional
//!   claim, and only the claimer runs it.
//! - The first tick after start fires each automation missed while the service was down once
//!   (trigger `catchup`): the next due time is computed from the moment a run ends, so all
//!   missed slots collapse into that one run.
//! - An automation whose run is still going is not due (the claim holds it) and its next due time
//!   does not move until the run ends: overlap is skipped, never doubled.
//! - Runs are spawned, never awaited: a run parked on an approval delays nothing else.
//! - The process driving a run renews its lease every tick; when a process dies its lease lapses
//!   and another process adopts the run (resuming its session) instead of starting a second one.
//! - On shutdown, runs are left claimed and unfinished, so the next process adopts them.

mod observer;
mod prompts;
mod runner;
mod wakes;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};
use workmate_protocol::{AutomationId, RunId, TenantId, UserId};
use workmate_store::{Automation, AutomationRun, Claim, RunTrigger};

pub use observer::{NoObserver, ObserverFuture, RunObserver, TickObserver};
pub(crate) use runner::run_automation;

use crate::{Error, Result, SessionHub};

/// How the scheduler ticks.
#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// Time between ticks (`[scheduler] tick_seconds`).
    pub tick: Duration,
    /// Most automations fired, adopted or woken per tick.
    pub batch: u32,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            tick: Duration::from_secs(30),
            batch: 1000,
        }
    }
}

impl SchedulerConfig {
    /// How long a claim holds without renewal: four ticks, at least ten seconds.
    pub fn lease(&self) -> Duration {
        (self.tick * 4).max(Duration::from_secs(10))
    }
}

/// What one tick did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Automations found due.
    pub due: usize,
    /// Runs this process claimed and started.
    pub fired: usize,
    /// Due automations another process claimed first.
    pub lost: usize,
    /// Runs of dead processes this process took over.
    pub adopted: usize,
    /// Leases renewed on runs this process drives.
    pub renewed: usize,
    /// Wakes delivered.
    pub woken: usize,
    /// Prompts reminded of (`approvals.remind_after_minutes`).
    pub reminded: usize,
    /// Prompts dismissed as expired (`approvals.expire_after_hours`).
    pub expired: usize,
    /// Rows the tick's statements read or changed.
    pub rows: usize,
}

/// Fires automations and wakes sessions.
#[derive(Clone, Debug)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    hub: SessionHub,
    observer: Arc<dyn RunObserver>,
    config: SchedulerConfig,
    /// Runs this process drives.
    running: Mutex<HashMap<(TenantId, AutomationId), RunId>>,
    /// Told about every tick (metrics), when set.
    ticks: std::sync::OnceLock<Arc<dyn TickObserver>>,
    tasks: TaskTracker,
    stop: CancellationToken,
}

impl Scheduler {
    /// A scheduler over the hub's sessions; `observer` shows runs in chat.
    pub fn new(hub: SessionHub, observer: Arc<dyn RunObserver>, config: SchedulerConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                hub,
                observer,
                config,
                running: Mutex::default(),
                ticks: std::sync::OnceLock::new(),
                tasks: TaskTracker::new(),
                stop: CancellationToken::new(),
            }),
        }
    }

    /// Reports every tick to `observer` from now on (set once; later calls change nothing).
    pub fn observe_ticks(&self, observer: Arc<dyn TickObserver>) {
        if self.inner.ticks.set(observer).is_err() {
            warn!("The scheduler already reports its ticks.");
        }
    }

    /// Starts the tick loop: a catch-up tick at once, then one tick per interval.
    pub fn start(&self) {
        let inner = Arc::clone(&self.inner);
        self.inner.tasks.spawn(async move {
            let mut trigger = RunTrigger::Catchup;
            let mut interval = tokio::time::interval(inner.config.tick);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = inner.stop.cancelled() => return,
                    _ = interval.tick() => {}
                }
                if let Err(e) = Inner::tick(&inner, trigger).await {
                    warn!(error = %e, "Scheduler tick failed; trying again next tick.");
                }
                trigger = RunTrigger::Schedule;
            }
        });
    }

    /// Runs one tick now: renews this process's leases, adopts orphaned runs, fires due
    /// automations with `trigger`, and delivers due wakes.
    pub async fn tick(&self, trigger: RunTrigger) -> Result<TickReport> {
        Inner::tick(&self.inner, trigger).await
    }

    /// Starts a run by hand. Refused while a run of the automation is going.
    pub async fn run_now(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        by: &UserId,
    ) -> Result<AutomationRun> {
        let inner = &self.inner;
        if inner.stop.is_cancelled() {
            return Err(Error::ShuttingDown);
        }
        let store = inner.hub.store();
        let Some(found) = store.automations().get(tenant, automation).await? else {
            return Err(Error::Rejected(format!("no automation {automation}")));
        };
        let now = store.clock_ms();
        let run_id = RunId::new();
        let claim = Claim {
            run: &run_id,
            trigger: RunTrigger::Manual,
            now_ms: now,
            lease_until_ms: now + inner.lease_ms(),
        };
        let Some(run) = store
            .automations()
            .claim(tenant, automation, &claim)
            .await?
        else {
            return Err(Error::Rejected(format!(
                "automation {automation} is running now; wait for that run to end"
            )));
        };
        info!(tenant = %tenant, automation = %automation, run = %run.id, by = %by, "Automation run started by hand.");
        inner.hold(&found, &run.id);
        let run = match Inner::open(inner, &found, run.clone()).await {
            Ok(run) => run,
            Err(e) => {
                inner
                    .finish(&found, run, Some(format!("the run could not start: {e}")))
                    .await;
                return Err(e);
            }
        };
        Inner::spawn_opened(inner, found, run.clone());
        Ok(run)
    }

    /// How many runs this process drives now.
    pub fn running(&self) -> usize {
        self.inner.lock().len()
    }

    /// Stops ticking and lets go of running runs without finishing them (they stay claimed, so
    /// the next process adopts them once their leases lapse). Call before the hub shuts down.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, HashMap<(TenantId, AutomationId), RunId>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.config.lease().as_millis()).unwrap_or(i64::MAX)
    }

    fn hold(&self, automation: &Automation, run: &RunId) {
        let key = (automation.tenant_id.clone(), automation.id.clone());
        self.lock().insert(key, run.clone());
    }

    fn release(&self, automation: &Automation, run: &RunId) {
        let key = (automation.tenant_id.clone(), automation.id.clone());
        let mut running = self.lock();
        if running.get(&key) == Some(run) {
            running.remove(&key);
        }
    }

    async fn tick(inner: &Arc<Self>, trigger: RunTrigger) -> Result<TickReport> {
        let started = std::time::Instant::now();
        let result = Self::tick_once(inner, trigger).await;
        if let Some(observer) = inner.ticks.get() {
            observer.tick_finished(result.as_ref().ok(), started.elapsed());
        }
        result
    }

    async fn tick_once(inner: &Arc<Self>, trigger: RunTrigger) -> Result<TickReport> {
        let mut report = TickReport::default();
        if inner.stop.is_cancelled() {
            return Ok(report);
        }
        let store = inner.hub.store();
        let now = store.clock_ms();
        let lease_until = now + inner.lease_ms();
        inner.renew(lease_until, &mut report).await?;

        let orphaned = store
            .automations()
            .orphaned(now, inner.config.batch)
            .await?;
        report.rows += orphaned.len();
        for automation in orphaned {
            let Some(run_id) = automation.running_run_id.clone() else {
                continue;
            };
            let (tenant, id) = (&automation.tenant_id, &automation.id);
            report.rows += 1;
            if !store
                .automations()
                .adopt(tenant, id, &run_id, now, lease_until)
                .await?
            {
                continue;
            }
            let Some(run) = store.automations().run(tenant, &run_id).await? else {
                warn!(tenant = %tenant, automation = %id, run = %run_id, "An adopted run has no record; releasing the automation.");
                continue;
            };
            info!(tenant = %tenant, automation = %id, run = %run_id, "Adopting a run whose process stopped.");
            report.adopted += 1;
            inner.hold(&automation, &run_id);
            Self::spawn_adopted(inner, automation, run);
        }

        Self::sweep_prompts(inner, now, &mut report).await?;

        let due = store.automations().due(now, inner.config.batch).await?;
        report.due = due.len();
        report.rows += due.len();
        let run_ids: Vec<RunId> = due.iter().map(|_| RunId::new()).collect();
        let batch: Vec<_> = due
            .iter()
            .zip(&run_ids)
            .map(|(automation, run)| {
                let claim = Claim {
                    run,
                    trigger,
                    now_ms: now,
                    lease_until_ms: lease_until,
                };
                (automation, claim)
            })
            .collect();
        let claimed = store.automations().claim_batch(&batch).await?;
        drop(batch);
        // Spawned only once every claim is committed, so the runs' own writes never queue
        // behind the rest of the batch (or the batch behind them).
        for (automation, run) in due.into_iter().zip(claimed) {
            report.rows += 1;
            let Some(run) = run else {
                report.lost += 1;
                continue;
            };
            report.rows += 1;
            report.fired += 1;
            inner.hold(&automation, &run.id);
            Self::spawn_fresh(inner, automation, run);
        }

        let (woken, rows) = wakes::deliver_due(inner, now).await?;
        report.woken = woken;
        report.rows += rows;
        Ok(report)
    }

    async fn renew(&self, lease_until: i64, report: &mut TickReport) -> Result<()> {
        let held: Vec<_> = self
            .lock()
            .iter()
            .map(|((tenant, id), run)| (tenant.clone(), id.clone(), run.clone()))
            .collect();
        for (tenant, id, run) in held {
            report.rows += 1;
            let kept = self
                .hub
                .store()
                .automations()
                .renew(&tenant, &id, &run, lease_until)
                .await?;
            if kept {
                report.renewed += 1;
            } else {
                // Finished meanwhile, or adopted by another process after our lease lapsed.
                let mut running = self.lock();
                if running.get(&(tenant.clone(), id.clone())) == Some(&run) {
                    running.remove(&(tenant, id));
                }
            }
        }
        Ok(())
    }
}
