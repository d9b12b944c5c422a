//! The store's writer: group commit for turn steps.
//!
//! Every turn step of every session is queued here instead of opening a transaction of its own.
//! A writer task takes whatever has queued while its last commit ran and stores it in one
//! transaction (see [`batch`]), so under load one commit carries many sessions' steps, and a
//! quiet store still commits each step at once (nothing waits for a batch to fill).
//!
//! Invariants: steps of one session are stored in the order they were queued (a session always
//! maps to the same shard, and a shard is one FIFO queue served by one task); every queued step's
//! `done` callback runs exactly once, with its outcome, including when the writer stops.

mod batch;
mod rows;
mod step;

pub use step::{Counters, LedgerMove, SessionChange, StepError, StepWrite, StepWritten};

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use tokio::sync::mpsc;

use workmate_protocol::{SessionId, TenantId};

use crate::{Dialect, Store};

/// The most steps one transaction stores.
const MAX_BATCH: usize = 256;

/// What runs once a step is stored or refused.
pub type StepDone = Box<dyn FnOnce(Result<StepWritten, StepError>) + Send>;

struct Job {
    step: StepWrite,
    done: StepDone,
}

/// A handle on the writer tasks; cheap to clone.
#[derive(Clone, Debug)]
pub struct Writer {
    shards: Vec<mpsc::UnboundedSender<Job>>,
}

impl Writer {
    /// Starts the writer tasks on the current tokio runtime: one on SQLite (it has one write
    /// lock), a few on MySQL and Postgres, whose row locks let sessions commit side by side.
    pub(crate) fn spawn(store: &Store) -> Self {
        let count = match store.dialect {
            Dialect::Sqlite => 1,
            Dialect::Mysql | Dialect::Postgres => 4,
        };
        let shards = (0..count)
            .map(|_| {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(serve(store.clone(), rx));
                tx
            })
            .collect();
        Self { shards }
    }

    /// Queues a step; `done` runs once it is stored or refused.
    pub fn submit(&self, step: StepWrite, done: StepDone) {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (&step.tenant, &step.session).hash(&mut hasher);
        let shard = (hasher.finish() % self.shards.len() as u64) as usize;
        if let Err(mpsc::error::SendError(job)) = self.shards[shard].send(Job { step, done }) {
            (job.done)(Err(StepError::Stopped));
        }
    }
}

/// One shard's task: stores what has queued, in batches, until every handle is gone.
async fn serve(store: Store, mut queue: mpsc::UnboundedReceiver<Job>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    let mut failed = FailedLineages::default();
    while queue.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        let mut dones = Vec::with_capacity(jobs.len());
        let mut steps = Vec::with_capacity(jobs.len());
        for job in jobs.drain(..) {
            match failed.refusal(&job.step) {
                Some(error) => (job.done)(Err(error)),
                None => {
                    steps.push(job.step);
                    dones.push(job.done);
                }
            }
        }
        let outcomes = batch::write(&store, &steps).await;
        for ((step, done), outcome) in steps.iter().zip(dones).zip(outcomes) {
            failed.record(step, outcome.as_ref().err());
            done(outcome);
        }
    }
}

/// The lineages whose steps failed, by session: their later steps are refused.
#[derive(Default)]
struct FailedLineages {
    by_session: HashMap<(TenantId, SessionId), (u64, StepError)>,
}

/// Failed lineages remembered at most; failures are rare, and a forgotten one only means a
/// later step of it meets the counter fence alone.
const MAX_FAILED_LINEAGES: usize = 10_000;

impl FailedLineages {
    fn refusal(&self, step: &StepWrite) -> Option<StepError> {
        let key = (step.tenant.clone(), step.session.clone());
        match self.by_session.get(&key) {
            Some((lineage, error)) if *lineage == step.lineage => Some(error.clone()),
            _ => None,
        }
    }

    fn record(&mut self, step: &StepWrite, failure: Option<&StepError>) {
        let key = (step.tenant.clone(), step.session.clone());
        match failure {
            Some(error) => {
                if self.by_session.len() >= MAX_FAILED_LINEAGES {
                    self.by_session.clear();
                }
                self.by_session.insert(key, (step.lineage, error.clone()));
            }
            // A new lineage of the session (a reloaded runtime) writes again.
            None => {
                if self
                    .by_session
                    .get(&key)
                    .is_some_and(|(l, _)| *l != step.lineage)
                {
                    self.by_session.remove(&key);
                }
            }
        }
    }
}
