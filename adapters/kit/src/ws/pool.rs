//! The handler tasks of one supervised connection, across its reconnections, and the acks they
//! queued.
//!
//! Invariants: at most `max_in_flight` handlers run at once; a delivery beyond the running and
//! waiting capacity is dropped and logged, never queued without bound; each task sends at most
//! one ack while it holds its slot, so sending never waits; every task is owned here and joined
//! or cut.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

use super::{Message, Task};

/// Running handler tasks and the acks they produced, in the order they finished.
#[derive(Debug)]
pub(super) struct Pool {
    pub(super) tasks: JoinSet<()>,
    pub(super) slots: Arc<Semaphore>,
    pub(super) acks: mpsc::Receiver<Message>,
    acks_tx: mpsc::Sender<Message>,
    /// Tasks running or waiting for a slot, at most.
    capacity: usize,
    /// The reader takes a slot before it reads.
    pub(super) holds_reader: bool,
}

impl Pool {
    pub(super) fn new(max_in_flight: usize, max_waiting: Option<usize>) -> Self {
        let max_in_flight = max_in_flight.max(1);
        let (acks_tx, acks) = mpsc::channel(max_in_flight);
        Self {
            tasks: JoinSet::new(),
            slots: Arc::new(Semaphore::new(max_in_flight)),
            acks,
            acks_tx,
            capacity: max_in_flight + max_waiting.unwrap_or(0),
            holds_reader: max_waiting.is_none(),
        }
    }

    /// Forgets the tasks that ended.
    pub(super) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// No task runs or waits and no ack is queued.
    pub(super) fn is_idle(&self) -> bool {
        self.tasks.is_empty() && self.acks.is_empty()
    }

    /// Runs `task` in `slot`, or in the next free slot; drops it when the queue is full.
    pub(super) fn spawn(&mut self, slot: Option<OwnedSemaphorePermit>, task: Task, name: &str) {
        self.reap();
        if slot.is_none() && self.tasks.len() >= self.capacity {
            tracing::error!(
                running = self.tasks.len(),
                "{name}: delivery dropped, every handler slot is busy and the queue is full."
            );
            return;
        }
        let (slots, acks) = (Arc::clone(&self.slots), self.acks_tx.clone());
        self.tasks.spawn(async move {
            // The semaphore is never closed; a closed one would mean nothing may run.
            let Some(_slot) = (match slot {
                Some(slot) => Some(slot),
                None => slots.acquire_owned().await.ok(),
            }) else {
                return;
            };
            if let Some(ack) = task.await {
                // Fails only once the supervisor is gone; the platform then delivers again.
                let _ = acks.send(ack).await;
            }
        });
    }

    /// Lets running tasks finish for up to `drain` (their acks have nowhere to go), then cuts
    /// the rest, saying so.
    pub(super) async fn finish(&mut self, drain: Option<std::time::Duration>, name: &str) {
        if let Some(drain) = drain {
            let (tasks, acks) = (&mut self.tasks, &mut self.acks);
            let _ = tokio::time::timeout(drain, async {
                loop {
                    tokio::select! {
                        _ = acks.recv() => {}
                        joined = tasks.join_next() => if joined.is_none() { break },
                    }
                }
            })
            .await;
        }
        if !self.tasks.is_empty() {
            tracing::warn!(
                running = self.tasks.len(),
                "{name}: handlers still running at shutdown were cut; their deliveries come again."
            );
        }
        self.tasks.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ack(text: &'static str) -> Task {
        Box::pin(async move { Some(Message::text(text)) })
    }

    #[tokio::test]
    async fn one_runs_one_waits_the_next_is_dropped_and_acks_come_in_order() {
        let mut pool = Pool::new(1, Some(1));
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let first: Task = Box::pin(async move {
            let _ = wait.await;
            Some(Message::text("a"))
        });
        pool.spawn(None, first, "test");
        pool.spawn(None, ack("b"), "test");
        pool.spawn(None, ack("c"), "test");
        assert_eq!(pool.tasks.len(), 2, "the third found the queue full");
        let _ = go.send(());
        assert_eq!(pool.acks.recv().await, Some(Message::text("a")));
        assert_eq!(pool.acks.recv().await, Some(Message::text("b")));
        while pool.tasks.join_next().await.is_some() {}
        assert!(pool.is_idle());
    }

    #[tokio::test(start_paused = true)]
    async fn finish_lets_tasks_end_within_the_drain_and_cuts_the_rest() {
        let mut pool = Pool::new(4, None);
        let slot = Arc::clone(&pool.slots).acquire_owned().await.ok();
        pool.spawn(slot, ack("done"), "test");
        pool.spawn(None, Box::pin(std::future::pending()), "test");
        pool.finish(Some(Duration::from_secs(3)), "test").await;
        assert!(pool.tasks.is_empty());
        assert_eq!(
            pool.acks.try_recv().ok(),
            None,
            "acks were taken while draining"
        );
    }
}
