//! The audit outbox: how far each sink has received each tenant's chain.
//!
//! Invariants: a sink's place in a tenant's chain only moves forward (an older place never
//! overwrites a newer one); the records after it are exactly those still to be delivered, in
//! chain order; nothing here deletes a record.

use workmate_protocol::TenantId;

use super::audit::AuditRepo;
use crate::Result;
use crate::row::col;

/// A tenant whose chain a sink has not received all of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkBacklog {
    /// The tenant.
    pub tenant: TenantId,
    /// The last place the sink received (0: none).
    pub delivered: i64,
    /// The chain's head.
    pub head: i64,
}

impl AuditRepo<'_> {
    /// The tenants whose sealed records `sink` has not all received, with how far it got.
    pub async fn sink_backlog(&self, sink: &str) -> Result<Vec<SinkBacklog>> {
        let store = self.store();
        let rows = store
            .dialect
            .query("SELECT h.tenant_id, h.seq AS head, COALESCE(c.seq, 0) AS delivered FROM audit_chain_heads h LEFT JOIN audit_sink_cursors c ON c.sink = ? AND c.tenant_id = h.tenant_id WHERE h.seq > COALESCE(c.seq, 0) ORDER BY h.tenant_id")
            .bind(sink.to_owned())
            .fetch_all(&store.pool)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(SinkBacklog {
                    tenant: TenantId::from(col::<String>(r, "audit_chain_heads", "tenant_id")?),
                    delivered: col(r, "audit_sink_cursors", "delivered")?,
                    head: col(r, "audit_chain_heads", "head")?,
                })
            })
            .collect()
    }

    /// Records that `sink` has received `tenant`'s chain up to place `seq`.
    pub async fn sink_delivered(&self, sink: &str, tenant: &TenantId, seq: i64) -> Result<()> {
        let store = self.store();
        let d = store.dialect;
        let now = store.clock_ms();
        d.insert_ignoring_duplicates(
            "INSERT INTO audit_sink_cursors (sink, tenant_id, seq, updated_at_ms) VALUES (?, ?, ?, ?)",
            "seq",
        )
        .bind(sink.to_owned())
        .bind(tenant.as_str().to_owned())
        .bind(0_i64)
        .bind(now)
        .execute(&store.pool)
        .await?;
        d.query("UPDATE audit_sink_cursors SET seq = ?, updated_at_ms = ? WHERE sink = ? AND tenant_id = ? AND seq < ?")
            .bind(seq)
            .bind(now)
            .bind(sink.to_owned())
            .bind(tenant.as_str().to_owned())
            .bind(seq)
            .execute(&store.pool)
            .await?;
        Ok(())
    }
}
