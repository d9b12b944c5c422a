//! Publishing: one task sends what the replica publishes, in order, in pipelines.
//!
//! Invariant: messages leave in the order they were queued; a batch Redis refuses is dropped
//! and counted (subscribers replay state events from the store), never retried out of order.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Shared, timed};

/// Most messages sent in one pipeline.
const BATCH: usize = 256;

pub(super) async fn run(
    shared: Arc<Shared>,
    mut queue: mpsc::Receiver<(String, String)>,
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
        let count = u64::try_from(batch.len()).unwrap_or(u64::MAX);
        let mut pipeline = redis::pipe();
        for (channel, payload) in batch.drain(..) {
            pipeline.cmd("PUBLISH").arg(channel).arg(payload).ignore();
        }
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
}
