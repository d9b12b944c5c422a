//! Streaming the audit trail to its sinks (Redis Streams, NATS JetStream) through the outbox.
//!
//! The database is the outbox: sealed records stay there, and each sink's place in each
//! tenant's chain (`audit_sink_cursors`) says what it still lacks. A shipper delivers the records
//! after that place in chain order and moves the place forward only after the sink has taken
//! them. A sink that is down keeps its place; its records wait and go out, in order, when it is
//! back.
//!
//! Invariants: delivery is at least once, and each sink drops a redelivered record by its place
//! (Redis: the entry id is the place; NATS: `Nats-Msg-Id` is `<tenant>:<place>`), so the stream
//! holds each record once, in order, even when the process dies between delivering and moving
//! the place, or two replicas ship at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use workmate_protocol::TenantId;
use workmate_store::{AuditRecord, Store};

/// Records delivered per call.
const SHIP_BATCH: u32 = 200;
/// The pause between rounds while a sink keeps up.
const SHIP_EVERY: Duration = Duration::from_millis(250);
/// The longest pause after failures.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A future a sink returns.
pub type SinkFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Where the trail is streamed.
pub trait Sink: Send + Sync {
    /// Its name, which keys its places in the outbox (`redis`, `nats`).
    fn name(&self) -> &'static str;

    /// Delivers `records` of `tenant`, in order; records it already holds are dropped by their
    /// place. An error means some may not have been delivered.
    fn deliver<'a>(&'a self, tenant: &'a TenantId, records: &'a [AuditRecord]) -> SinkFuture<'a>;
}

/// Delivers one sink's backlog.
pub struct Shipper {
    store: Store,
    sink: Arc<dyn Sink>,
}

impl std::fmt::Debug for Shipper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shipper")
            .field("sink", &self.sink.name())
            .finish_non_exhaustive()
    }
}

impl Shipper {
    /// A shipper of `store`'s sealed records to `sink`.
    pub fn new(store: Store, sink: Arc<dyn Sink>) -> Self {
        Self { store, sink }
    }

    /// Delivers everything the sink lacks; how many records. Stops at the first failure, with
    /// the places of what was delivered kept.
    pub async fn ship_once(&self) -> Result<u64, String> {
        let audit = self.store.audit();
        let name = self.sink.name();
        let backlog = audit.sink_backlog(name).await.map_err(|e| e.to_string())?;
        let mut shipped = 0;
        for tenant in backlog {
            let mut after = tenant.delivered;
            while after < tenant.head {
                let page = audit
                    .sealed_after(&tenant.tenant, after, 0, i64::MAX, SHIP_BATCH)
                    .await
                    .map_err(|e| e.to_string())?;
                let Some(last) = page.last().and_then(|r| r.seq) else {
                    break;
                };
                self.sink.deliver(&tenant.tenant, &page).await?;
                audit
                    .sink_delivered(name, &tenant.tenant, last)
                    .await
                    .map_err(|e| e.to_string())?;
                shipped += page.len() as u64;
                after = last;
            }
        }
        Ok(shipped)
    }

    /// Ships until `stop`, backing off while the sink is down; says once when it goes down and
    /// once when it is back.
    pub fn run(self, stop: CancellationToken) {
        tokio::spawn(async move {
            let mut pause = SHIP_EVERY;
            let mut down = false;
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(pause) => {}
                }
                match self.ship_once().await {
                    Ok(n) => {
                        if down {
                            info!(
                                sink = self.sink.name(),
                                delivered = n,
                                "The audit sink is back; held records delivered."
                            );
                        }
                        down = false;
                        pause = SHIP_EVERY;
                    }
                    Err(e) => {
                        if !down {
                            warn!(sink = self.sink.name(), error = %e, "The audit sink is unavailable; records wait in the outbox.");
                        }
                        down = true;
                        pause = (pause * 2).min(MAX_BACKOFF);
                    }
                }
            }
        });
    }
}

/// One record as a sink carries it: the export line.
pub(crate) fn payload(tenant: &TenantId, record: &AuditRecord) -> String {
    super::record_json(tenant, record).to_string()
}
