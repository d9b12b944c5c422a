//! Callbacks to handler tasks.
//!
//! Invariants: at most [`MAX_IN_FLIGHT`] handler calls run at once and at most [`MAX_WAITING`]
//! more wait (first come, first served) for a slot; a callback beyond that is dropped and
//! logged rather than blocking the reader; every task is owned here and joined or aborted.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::handler::FrameHandler;

/// The most handler calls running at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// The most callbacks waiting for a running slot.
pub const MAX_WAITING: usize = 256;

/// The handler tasks of one client, across its connections.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    handler: Arc<dyn FrameHandler>,
    tasks: JoinSet<()>,
    slots: Arc<Semaphore>,
}

impl Dispatcher {
    pub(crate) fn new(handler: Arc<dyn FrameHandler>) -> Self {
        Self {
            handler,
            tasks: JoinSet::new(),
            slots: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        }
    }

    /// Hands a callback to the handler on its own task.
    pub(crate) fn dispatch(&mut self, cmd: String, req_id: String, body: Value) {
        self.reap();
        if self.tasks.len() >= MAX_IN_FLIGHT + MAX_WAITING {
            tracing::error!(
                %cmd, %req_id, running = MAX_IN_FLIGHT, waiting = MAX_WAITING,
                "WeCom callback dropped: every handler slot is busy and the queue is full."
            );
            return;
        }
        let handler = Arc::clone(&self.handler);
        let slots = Arc::clone(&self.slots);
        self.tasks.spawn(async move {
            // The semaphore is never closed; a closed one would mean nothing may run.
            let Ok(_slot) = slots.acquire_owned().await else {
                return;
            };
            handler.handle(&cmd, &req_id, body).await;
        });
    }

    /// Forgets finished tasks.
    pub(crate) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Whether no handler call runs or waits.
    pub(crate) fn is_idle(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Waits until the next task ends; at once when none runs.
    pub(crate) async fn join_next(&mut self) {
        let _ = self.tasks.join_next().await;
    }

    /// Aborts the tasks still running, and waits for them to go.
    pub(crate) async fn abort(&mut self) {
        self.reap();
        if !self.tasks.is_empty() {
            tracing::warn!(
                running = self.tasks.len(),
                "WeCom handlers still running at shutdown were cut."
            );
        }
        self.tasks.shutdown().await;
    }
}
