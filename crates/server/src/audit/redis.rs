//! The Redis Streams sink: each tenant's chain in the stream `<prefix>:<tenant>`, one entry per
//! record whose id is its place (`<seq>-0`) and whose field `record` is its export line.
//!
//! Invariant: an entry is added only after the one before it (Redis refuses an id that is not
//! greater than the stream's last), so a redelivered record is refused and counted as held.

use tokio::sync::Mutex;
use workmate_protocol::TenantId;
use workmate_store::AuditRecord;

use super::sinks::{Sink, SinkFuture, payload};
use crate::config::RedisSinkConfig;

/// How long connecting, and each command, may take.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The Redis Streams sink.
pub struct RedisSink {
    client: redis::Client,
    prefix: String,
    connection: Mutex<Option<redis::aio::MultiplexedConnection>>,
}

impl std::fmt::Debug for RedisSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSink")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisSink {
    /// A sink per `config`; connects on first delivery.
    pub fn new(config: &RedisSinkConfig) -> Result<Self, String> {
        Ok(Self {
            client: redis::Client::open(config.url.as_str())
                .map_err(|e| format!("[audit.redis] url: {e}"))?,
            prefix: config.stream_prefix.clone(),
            connection: Mutex::new(None),
        })
    }

    async fn deliver_all(&self, tenant: &TenantId, records: &[AuditRecord]) -> Result<(), String> {
        let mut slot = self.connection.lock().await;
        if slot.is_none() {
            let connecting = self.client.get_multiplexed_async_connection();
            let connection = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
                .await
                .map_err(|_| "connecting to Redis timed out".to_owned())?
                .map_err(|e| format!("connecting to Redis: {e}"))?;
            *slot = Some(connection);
        }
        let Some(connection) = slot.as_mut() else {
            return Err("no Redis connection".into());
        };
        let key = format!("{}:{tenant}", self.prefix);
        for record in records {
            let Some(seq) = record.seq else { continue };
            let mut command = redis::cmd("XADD");
            command
                .arg(&key)
                .arg(format!("{seq}-0"))
                .arg("record")
                .arg(payload(tenant, record));
            let adding = command.query_async::<String>(connection);
            let Ok(added) = tokio::time::timeout(CONNECT_TIMEOUT, adding).await else {
                *slot = None;
                return Err(format!("XADD {key}: no answer in time"));
            };
            match added {
                Ok(_) => {}
                // Already there: an earlier delivery got it in.
                Err(e) if e.to_string().contains("equal or smaller") => {}
                Err(e) => {
                    *slot = None;
                    return Err(format!("XADD {key}: {e}"));
                }
            }
        }
        Ok(())
    }
}

impl Sink for RedisSink {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn deliver<'a>(&'a self, tenant: &'a TenantId, records: &'a [AuditRecord]) -> SinkFuture<'a> {
        Box::pin(self.deliver_all(tenant, records))
    }
}
