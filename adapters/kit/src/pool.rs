//! [`AckPool`]: the handler tasks of a long connection whose answers go back over it (Feishu's
//! acks carrying a handler's result, DingTalk's Stream acks).
//!
//! Invariants: at most `max_in_flight` handlers run at once (the reader takes a slot before it
//! reads, which holds the platform back instead of queueing without bound); every task is owned
//! by the pool and joined or cut at shutdown; each task sends at most one ack while it holds its
//! slot, so sending never waits.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

/// Running handler tasks and the acks they produced, in the order they finished.
#[derive(Debug)]
pub struct AckPool<T> {
    tasks: JoinSet<()>,
    permits: Arc<Semaphore>,
    acks_tx: mpsc::Sender<T>,
    acks: mpsc::Receiver<T>,
}

impl<T: Send + 'static> AckPool<T> {
    /// A pool of at most `max_in_flight` tasks.
    pub fn new(max_in_flight: usize) -> Self {
        let max_in_flight = max_in_flight.max(1);
        let (acks_tx, acks) = mpsc::channel(max_in_flight);
        Self {
            tasks: JoinSet::new(),
            permits: Arc::new(Semaphore::new(max_in_flight)),
            acks_tx,
            acks,
        }
    }

    /// The slots a reader takes one of before it reads the next message.
    pub fn slots(&self) -> Arc<Semaphore> {
        Arc::clone(&self.permits)
    }

    /// Forgets the tasks that ended.
    pub fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Runs `task` holding `permit`; the ack it returns, if any, is queued for the connection.
    pub fn spawn(
        &mut self,
        permit: OwnedSemaphorePermit,
        task: impl Future<Output = Option<T>> + Send + 'static,
    ) {
        let acks = self.acks_tx.clone();
        self.tasks.spawn(async move {
            if let Some(ack) = task.await {
                // Only fails once the connection is gone; the platform then delivers again.
                let _ = acks.send(ack).await;
            }
            drop(permit);
        });
    }

    /// The next ack, waiting while tasks run; `None` once no task runs and none is queued.
    pub async fn next_ack(&mut self) -> Option<T> {
        loop {
            if let Ok(ack) = self.acks.try_recv() {
                return Some(ack);
            }
            if self.tasks.is_empty() {
                return None;
            }
            tokio::select! {
                Some(ack) = self.acks.recv() => return Some(ack),
                _ = self.tasks.join_next() => {}
            }
        }
    }

    /// A future for the next ack, for a reader's `select!` (cancel-safe).
    pub async fn recv_ack(&mut self) -> Option<T> {
        self.acks.recv().await
    }

    /// Cuts the tasks still running (their messages are not acked, so `platform` delivers them
    /// again), saying so.
    pub async fn abort(&mut self, platform: &str) {
        if !self.tasks.is_empty() {
            tracing::warn!(
                running = self.tasks.len(),
                "{platform} handlers still running at shutdown were cut; {platform} will deliver their messages again."
            );
        }
        self.tasks.shutdown().await;
    }
}
