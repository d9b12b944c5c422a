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

pub use step::{Counters, LedgerMove, StepError, StepWrite, StepWritten};

use std::hash::{Hash, Hasher};

use tokio::sync::mpsc;

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
    pub(crate) fn spawn(store: Store) -> Self {
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
    while queue.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        let (steps, dones): (Vec<StepWrite>, Vec<StepDone>) =
            jobs.drain(..).map(|job| (job.step, job.done)).unzip();
        let outcomes = batch::write(&store, &steps).await;
        for (done, outcome) in dones.into_iter().zip(outcomes) {
            done(outcome);
        }
    }
}
