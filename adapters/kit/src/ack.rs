//! Ack first, process after.
//!
//! Invariant: [`WorkQueue::try_submit`] never waits. It either queues the job or refuses it at
//! once, so a webhook handler can always answer the platform inside its deadline (1 s for a URL
//! handshake, 2–5 s otherwise; reference §0). A refusal is the caller's cue to answer 503, which
//! makes the platform deliver again later; an accepted job is run even if shutdown begins before it
//! starts, because the platform was told it was received and will not retry it.
//!
//! Shape: a bounded channel of jobs, one dispatcher task, and a semaphore of `workers` permits.
//! The dispatcher takes a permit before it takes a job, so at most `capacity` jobs wait and at
//! most `workers` run; each job runs as its own task on a [`TaskTracker`] (a slow job never holds
//! up the dispatcher, and a panicking job only loses itself). Every task is owned and joined by
//! [`WorkQueue::shutdown`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};

/// A unit of deferred webhook work.
pub type Job = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The queue took no job: it is full, or shutting down. Answer 503 so the platform retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("work queue full or shutting down")]
pub struct QueueFull;

/// A bounded queue of webhook jobs run by a fixed number of concurrent workers.
pub struct WorkQueue {
    tx: mpsc::Sender<Job>,
    tracker: TaskTracker,
    stop: CancellationToken,
    capacity: usize,
}

impl fmt::Debug for WorkQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkQueue")
            .field("capacity", &self.capacity)
            .field("queued", &self.queued())
            .field("tasks", &self.tracker.len())
            .finish_non_exhaustive()
    }
}

impl WorkQueue {
    /// Starts a queue holding up to `capacity` waiting jobs, running up to `workers` at a time.
    /// Both are raised to at least 1. Must be called inside a tokio runtime.
    pub fn new(workers: usize, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let (tx, rx) = mpsc::channel(capacity);
        let tracker = TaskTracker::new();
        let stop = CancellationToken::new();
        let permits = Arc::new(Semaphore::new(workers.max(1)));
        tracker.spawn(dispatch(rx, permits, tracker.clone(), stop.clone()));
        Self {
            tx,
            tracker,
            stop,
            capacity,
        }
    }

    /// Queues `job` without waiting; refuses it when the queue is full or shutting down.
    pub fn try_submit(&self, job: Job) -> Result<(), QueueFull> {
        if self.stop.is_cancelled() {
            return Err(QueueFull);
        }
        self.tx.try_send(job).map_err(|e| {
            if matches!(e, mpsc::error::TrySendError::Full(_)) {
                warn!(capacity = self.capacity, "Work queue full; refusing a job.");
            }
            QueueFull
        })
    }

    /// Jobs accepted and not yet started.
    pub fn queued(&self) -> usize {
        self.capacity.saturating_sub(self.tx.capacity())
    }

    /// A token cancelled when shutdown begins, for jobs that wait on something long (a turn, a
    /// lease) and should give up early rather than hold up the shutdown.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.stop.child_token()
    }

    /// Refuses new jobs, runs the ones already accepted, and returns when every task has ended.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.tracker.close();
        self.tracker.wait().await;
        debug!("Work queue shut down.");
    }
}

async fn dispatch(
    mut rx: mpsc::Receiver<Job>,
    permits: Arc<Semaphore>,
    tracker: TaskTracker,
    stop: CancellationToken,
) {
    let mut draining = false;
    loop {
        // The semaphore is never closed, so acquiring only fails if that invariant breaks.
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let job = if draining {
            rx.recv().await
        } else {
            tokio::select! {
                job = rx.recv() => job,
                () = stop.cancelled() => {
                    // Refuse new sends, keep what was accepted.
                    rx.close();
                    draining = true;
                    rx.recv().await
                }
            }
        };
        let Some(job) = job else {
            return;
        };
        tracker.spawn(async move {
            job.await;
            drop(permit);
        });
    }
}
