//! Publishing: one task sends what the replica publishes, in order, in pipelines.
//!
//! Invariants: messages leave in the order they were queued; a batch Redis refuses is dropped
//! and counted (subscribers replay state events from the store), never retried out of order; a
//! flush is answered once everything queued before it was sent (or dropped).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Shared, timed};

/// Most messages sent in one pipeline.
const BATCH: usize = 256;

/// What the publishing task is handed.
#[derive(Debug)]
pub(super) enum Outgoing {
    /// A message for `channel`.
    Message { channel: String, payload: String },
    /// Answer once everything queued before is sent.
    Flush(oneshot::Sender<()>),
}

pub(super) async fn run(
    shared: Arc<Shared>,
    mut queue: mpsc::Receiver<Outgoing>,
    stop: CancellationToken,
) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        let received = tokio::select! {
            () = stop.cancelled() => return,
            received = queue.recv_many(&mut batch, BATCH) => received,
        };
        if received == 0 {
            return;
        }
        let mut pipeline = redis::pipe();
        let mut count = 0_u64;
        let mut flushes = Vec::new();
        for outgoing in batch.drain(..) {
            match outgoing {
                Outgoing::Message { channel, payload } => {
                    pipeline.cmd("PUBLISH").arg(channel).arg(payload).ignore();
                    count += 1;
                }
                Outgoing::Flush(done) => flushes.push(done),
            }
        }
        if count > 0 {
            send(&shared, &pipeline, count).await;
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// Sends one pipeline of `count` messages, counting what became of them.
async fn send(shared: &Shared, pipeline: &redis::Pipeline, count: u64) {
    let sent = match shared.connection().await {
        Ok(mut connection) => timed(pipeline.query_async::<()>(&mut connection)).await,
        Err(e) => Err(e),
    };
    match sent {
        Ok(()) => shared.published.fetch_add(count, Ordering::Relaxed),
        Err(e) => {
            shared.failed("publish events", &e);
            shared.dropped.fetch_add(count, Ordering::Relaxed)
        }
    };
}
