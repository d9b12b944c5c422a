//! Data frames to handler tasks, and handler answers to acks.
//!
//! Invariants: at most [`MAX_IN_FLIGHT`] payloads are being handled at once (the reader waits
//! for a slot, which holds Feishu back instead of queueing without bound); every handler task
//! is owned by the [`Dispatcher`] and joined; an ack is produced only for `Ok` and
//! [`HandlerError::Failed`], never for [`HandlerError::Retry`] or a handler that overran
//! [`HANDLER_TIMEOUT`], so those payloads are pushed again.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use workmate_adapter::AckPool;

use super::chunks::Reassembly;
use super::frame::{AckCode, Frame, MESSAGE_ID, SEQ, SUM, TRACE_ID};
use super::handler::{FrameHandler, HandlerError};

/// The most payloads handled at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// A handler still running after this is given up on and its payload left unacked (Feishu
/// itself waits 3 s before pushing it again).
pub const HANDLER_TIMEOUT: Duration = Duration::from_secs(10);

/// The handler tasks of one client, across its connections.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    handler: Arc<dyn FrameHandler>,
    /// The running handlers and the acks they queued for the current connection.
    pool: AckPool<Frame>,
    reassembly: Reassembly,
}

impl Dispatcher {
    pub(crate) fn new(handler: Arc<dyn FrameHandler>) -> Self {
        Self {
            handler,
            pool: AckPool::new(MAX_IN_FLIGHT),
            reassembly: Reassembly::default(),
        }
    }

    /// The slots of payloads being handled; the reader takes one before each frame.
    pub(crate) fn slots(&self) -> Arc<Semaphore> {
        self.pool.slots()
    }

    /// Forgets finished tasks.
    pub(crate) fn reap(&mut self) {
        self.pool.reap();
    }

    /// The next ack of a running handler; `None` once no handler runs and every ack was taken.
    pub(crate) async fn next_ack(&mut self) -> Option<Frame> {
        self.pool.next_ack().await
    }

    /// The next ack a finished handler queued (cancel-safe, for the reader's `select!`).
    pub(crate) async fn recv_ack(&mut self) -> Option<Frame> {
        self.pool.recv_ack().await
    }

    /// Aborts the tasks still running, and waits for them to go.
    pub(crate) async fn abort(&mut self) {
        self.pool.abort("Feishu").await;
    }

    /// Takes a data frame: reassembles it when chunked, then hands the whole payload to the
    /// handler on its own task, using `slot` when it does.
    pub(crate) fn dispatch(&mut self, mut frame: Frame, slot: &mut Option<OwnedSemaphorePermit>) {
        let kind = frame.message_type().to_owned();
        if kind != "event" && kind != "card" {
            tracing::debug!(%kind, "Feishu data frame of an unknown type ignored.");
            return;
        }
        let message_id = frame.header(MESSAGE_ID).unwrap_or_default().to_owned();
        let sum = frame.header_number(SUM).unwrap_or(1);
        let seq = frame.header_number(SEQ).unwrap_or(0);
        let chunk = frame.payload.take().unwrap_or_default();
        let payload = match self.reassembly.add(
            Instant::now(),
            &message_id,
            usize::try_from(sum).unwrap_or(usize::MAX),
            usize::try_from(seq).unwrap_or(usize::MAX),
            chunk,
        ) {
            Ok(Some(payload)) => payload,
            Ok(None) => return,
            Err(refused) => {
                tracing::warn!(%message_id, sum, seq, ?refused, "Feishu chunk with a bad index dropped.");
                return;
            }
        };
        let Some(permit) = slot.take() else {
            // The session reads only with a slot in hand; not reached.
            tracing::warn!(%message_id, "Feishu payload dropped: no handler slot.");
            return;
        };
        let handler = Arc::clone(&self.handler);
        self.pool.spawn(permit, async move {
            let trace_id = frame.header(TRACE_ID).unwrap_or_default().to_owned();
            let started = Instant::now();
            let outcome = tokio::time::timeout(HANDLER_TIMEOUT, handler.handle(&kind, payload)).await;
            let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let ack = match outcome {
                Ok(Ok(response)) => frame.into_ack(AckCode::Ok, Some(&response), elapsed_ms),
                Ok(Err(HandlerError::Failed(error))) => {
                    tracing::warn!(%kind, %message_id, %trace_id, %error, "Feishu payload failed; acked with code 500.");
                    frame.into_ack(AckCode::Failed, None, elapsed_ms)
                }
                Ok(Err(HandlerError::Retry)) => {
                    tracing::warn!(%kind, %message_id, %trace_id, "Feishu payload not taken; left unacked so Feishu pushes it again.");
                    return None;
                }
                Err(_) => {
                    tracing::warn!(%kind, %message_id, %trace_id, elapsed_ms, "Feishu handler overran; payload left unacked.");
                    return None;
                }
            };
            Some(ack)
        });
    }
}
