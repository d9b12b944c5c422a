//! Platform event ids already seen, so a redelivered webhook is processed once.
//!
//! Invariant: of any number of concurrent sightings of one unexpired event id, exactly one is
//! told it is the first. Expired ids count as unseen.

use workmate_protocol::TenantId;

use crate::{Result, Store};

/// Inbound event deduplication.
#[derive(Debug)]
pub struct DedupeRepo<'s> {
    store: &'s Store,
}

impl<'s> DedupeRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a sighting of `event_id`; `true` if nobody recorded it within its time to live.
    pub async fn first_sighting(
        &self,
        tenant: &TenantId,
        platform: &str,
        event_id: &str,
        ttl_ms: i64,
    ) -> Result<bool> {
        let d = self.store.dialect;
        let now = self.store.clock_ms();
        d.query("DELETE FROM inbound_dedupe WHERE tenant_id = ? AND platform = ? AND event_id = ? AND expires_at_ms <= ?")
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(event_id.to_owned())
            .bind(now)
            .execute(&self.store.pool)
            .await?;
        // A plain insert: the unique key decides, and its violation is the answer "seen".
        let inserted = d
            .query("INSERT INTO inbound_dedupe (tenant_id, platform, event_id, expires_at_ms) VALUES (?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(event_id.to_owned())
            .bind(now.saturating_add(ttl_ms))
            .execute(&self.store.pool)
            .await;
        match inserted {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Forgets the tenant's expired sightings; returns how many.
    pub async fn purge_expired(&self, tenant: &TenantId) -> Result<u64> {
        let done = self
            .store
            .dialect
            .query("DELETE FROM inbound_dedupe WHERE tenant_id = ? AND expires_at_ms <= ?")
            .bind(tenant.as_str().to_owned())
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected())
    }
}
