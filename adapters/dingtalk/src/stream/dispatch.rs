//! Messages to handler tasks, and handler answers to acks.
//!
//! Invariants: at most [`MAX_IN_FLIGHT`] messages are handled at once (the reader waits for a
//! slot, which holds DingTalk back instead of queueing without bound); every handler task is
//! owned by the [`Dispatcher`] and joined; a callback is acked only with its handler's answer,
//! and an event `SUCCESS` only when its handler succeeded (`LATER` otherwise, also when it
//! overran [`HANDLER_TIMEOUT`]), so nothing is acked that was not taken.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use workmate_adapter::AckPool;

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
    /// The running handlers and the acks they queued for the current connection.
    pool: AckPool<String>,
}

impl Dispatcher {
    pub(crate) fn new(handler: Arc<dyn StreamHandler>) -> Self {
        Self {
            handler,
            pool: AckPool::new(MAX_IN_FLIGHT),
        }
    }

    /// The slots of messages being handled; the reader takes one before each frame.
    pub(crate) fn slots(&self) -> Arc<Semaphore> {
        self.pool.slots()
    }

    /// Forgets finished tasks.
    pub(crate) fn reap(&mut self) {
        self.pool.reap();
    }

    /// The next ack of a running handler; `None` once no handler runs and every ack was taken.
    pub(crate) async fn next_ack(&mut self) -> Option<String> {
        self.pool.next_ack().await
    }

    /// The next ack a finished handler queued (cancel-safe, for the reader's `select!`).
    pub(crate) async fn recv_ack(&mut self) -> Option<String> {
        self.pool.recv_ack().await
    }

    /// Aborts the tasks still running, and waits for them to go.
    pub(crate) async fn abort(&mut self) {
        self.pool.abort("DingTalk").await;
    }

    /// Hands a message to the handler on its own task, holding `permit` while it runs.
    pub(crate) fn dispatch(
        &mut self,
        kind: FrameKind,
        message: Downstream,
        permit: OwnedSemaphorePermit,
    ) {
        let handler = Arc::clone(&self.handler);
        self.pool.spawn(permit, async move {
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
                    return None;
                }
                (FrameKind::Callback, Err(_)) => {
                    tracing::warn!(message_id = %id, %topic, "DingTalk callback handler overran; left unacked.");
                    return None;
                }
            };
            Some(ack)
        });
    }
}
