//! Messages to handler tasks, and handler answers to acks.
//!
//! Invariants: at most [`MAX_IN_FLIGHT`] messages are handled at once (the reader waits for a
//! slot, which holds DingTalk back instead of queueing without bound); every handler task is
//! owned by the [`Dispatcher`] and joined; a callback is acked only with its handler's answer,
//! and an event `SUCCESS` only when its handler succeeded (`LATER` otherwise, also when it
//! overran [`HANDLER_TIMEOUT`]), so nothing is acked that was not taken.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

use super::frame::{self, Downstream};
use super::handler::{FrameKind, StreamHandler};

/// The most messages handled at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// A handler still running after this is given up on (DingTalk pushes an un-acked message
/// again after about a minute).
pub const HANDLER_TIMEOUT: Duration = Duration::from_secs(30);

/// The handler tasks of one client, across its connections.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    handler: Arc<dyn StreamHandler>,
    tasks: JoinSet<()>,
    permits: Arc<Semaphore>,
    acks_tx: mpsc::Sender<String>,
    /// Acks to write on the current connection.
    pub(crate) acks: mpsc::Receiver<String>,
}

impl Dispatcher {
    pub(crate) fn new(handler: Arc<dyn StreamHandler>) -> Self {
        // Each task sends at most one ack while it holds a permit: sends never wait.
        let (acks_tx, acks) = mpsc::channel(MAX_IN_FLIGHT);
        Self {
            handler,
            tasks: JoinSet::new(),
            permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            acks_tx,
            acks,
        }
    }

    /// The slots of messages being handled; the reader takes one before each frame.
    pub(crate) fn slots(&self) -> Arc<Semaphore> {
        Arc::clone(&self.permits)
    }

    /// Forgets finished tasks.
    pub(crate) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// The next ack of a running handler; `None` once no handler runs and every ack was taken.
    pub(crate) async fn next_ack(&mut self) -> Option<String> {
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

    /// Aborts the tasks still running, and waits for them to go.
    pub(crate) async fn abort(&mut self) {
        if !self.tasks.is_empty() {
            tracing::warn!(
                running = self.tasks.len(),
                "DingTalk handlers still running at shutdown were cut; DingTalk will push their messages again."
            );
        }
        self.tasks.shutdown().await;
    }

    /// Hands a message to the handler on its own task, holding `permit` while it runs.
    pub(crate) fn dispatch(
        &mut self,
        kind: FrameKind,
        message: Downstream,
        permit: OwnedSemaphorePermit,
    ) {
        let handler = Arc::clone(&self.handler);
        let acks = self.acks_tx.clone();
        self.tasks.spawn(async move {
            let Downstream { headers, data, .. } = message;
            let id = headers.message_id.as_str();
            let topic = headers.topic.as_str();
            let outcome =
                tokio::time::timeout(HANDLER_TIMEOUT, handler.handle(kind, topic, id, &data)).await;
            let ack = match (kind, outcome) {
                (FrameKind::Callback, Ok(Ok(response))) => frame::callback_ack(id, &response),
                (FrameKind::Event, Ok(Ok(_))) => frame::event_ack(id, true, "OK"),
                (FrameKind::Event, Ok(Err(error))) => {
                    tracing::warn!(message_id = %id, %topic, %error, "DingTalk event not handled; acked LATER.");
                    frame::event_ack(id, false, &error.0)
                }
                (FrameKind::Event, Err(_)) => {
                    tracing::warn!(message_id = %id, %topic, "DingTalk event handler overran; acked LATER.");
                    frame::event_ack(id, false, "handler timed out")
                }
                (FrameKind::Callback, Ok(Err(error))) => {
                    tracing::warn!(message_id = %id, %topic, %error, "DingTalk callback not handled; left unacked so DingTalk pushes it again.");
                    return;
                }
                (FrameKind::Callback, Err(_)) => {
                    tracing::warn!(message_id = %id, %topic, "DingTalk callback handler overran; left unacked.");
                    return;
                }
            };
            // Only fails once the client is gone; DingTalk then pushes the message again.
            let _ = acks.send(ack).await;
            drop(permit);
        });
    }
}
