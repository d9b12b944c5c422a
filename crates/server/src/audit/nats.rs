//! The NATS JetStream sink: each tenant's chain on the subject `<prefix>.<tenant>` of one
//! stream (created when missing), each record's export line as a message whose `Nats-Msg-Id` is
//! `<tenant>:<seq>`.
//!
//! Invariant: a record counts as delivered only once JetStream acknowledged it (stored, or known
//! as a duplicate within the stream's window), and records are published one after the other.

use std::time::Duration;

use async_nats::jetstream::{self, message::PublishMessage, stream};
use tokio::sync::Mutex;
use workmate_protocol::TenantId;
use workmate_store::AuditRecord;

use super::sinks::{Sink, SinkFuture, payload};
use crate::config::NatsSinkConfig;

/// How long connecting, and each acknowledgement, may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The NATS JetStream sink.
pub struct NatsSink {
    config: NatsSinkConfig,
    context: Mutex<Option<jetstream::Context>>,
}

impl std::fmt::Debug for NatsSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsSink")
            .field("stream", &self.config.stream)
            .finish_non_exhaustive()
    }
}

impl NatsSink {
    /// A sink per `config`; connects (and creates the stream) on first delivery.
    pub fn new(config: &NatsSinkConfig) -> Self {
        Self {
            config: config.clone(),
            context: Mutex::new(None),
        }
    }

    async fn connect(&self) -> Result<jetstream::Context, String> {
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(TIMEOUT)
            .request_timeout(Some(TIMEOUT))
            .connect(self.config.url.as_str())
            .await
            .map_err(|e| format!("connecting to NATS: {e}"))?;
        let context = jetstream::new(client);
        context
            .get_or_create_stream(stream::Config {
                name: self.config.stream.clone(),
                subjects: vec![format!("{}.>", self.config.subject_prefix)],
                ..stream::Config::default()
            })
            .await
            .map_err(|e| format!("the JetStream stream {}: {e}", self.config.stream))?;
        Ok(context)
    }

    async fn deliver_all(&self, tenant: &TenantId, records: &[AuditRecord]) -> Result<(), String> {
        let mut slot = self.context.lock().await;
        if slot.is_none() {
            *slot = Some(self.connect().await?);
        }
        let Some(context) = slot.as_ref() else {
            return Err("no NATS connection".into());
        };
        let subject = format!("{}.{tenant}", self.config.subject_prefix);
        for record in records {
            let Some(seq) = record.seq else { continue };
            let message = PublishMessage::build()
                .payload(payload(tenant, record).into())
                .message_id(format!("{tenant}:{seq}"));
            let acked = async {
                let ack = context
                    .send_publish(subject.clone(), message)
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::time::timeout(TIMEOUT, ack)
                    .await
                    .map_err(|_| "no acknowledgement in time".to_owned())?
                    .map_err(|e| e.to_string())
            }
            .await;
            if let Err(e) = acked {
                *slot = None;
                return Err(format!("publishing to {subject}: {e}"));
            }
        }
        Ok(())
    }
}

impl Sink for NatsSink {
    fn name(&self) -> &'static str {
        "nats"
    }

    fn deliver<'a>(&'a self, tenant: &'a TenantId, records: &'a [AuditRecord]) -> SinkFuture<'a> {
        Box::pin(self.deliver_all(tenant, records))
    }
}
