//! Links that work once: a connect or sign-in link is spent when what it connects is stored.
//!
//! Invariant: spending is one conditional insert carrying the use's own random id, read back
//! afterwards, so of two uses of one link racing on any replicas exactly one spends it (on every
//! backend: MySQL's affected-row count cannot tell an ignored duplicate from an insert).

use workmate_protocol::TenantId;

use crate::{Result, Store};

/// Spent links.
#[derive(Debug)]
pub struct SpentLinkRepo<'s> {
    store: &'s Store,
}

impl<'s> SpentLinkRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Spends link `link_id` (for `purpose`, e.g. `connect`); `false` when it was spent already.
    pub async fn spend(&self, tenant: &TenantId, link_id: &str, purpose: &str) -> Result<bool> {
        let me = uuid::Uuid::new_v4().simple().to_string();
        self.store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO spent_links (tenant_id, link_id, purpose, spender, spent_at_ms) VALUES (?, ?, ?, ?, ?)",
                "link_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(link_id.to_owned())
            .bind(purpose.to_owned())
            .bind(me.clone())
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await?;
        let row = self
            .store
            .dialect
            .query("SELECT spender FROM spent_links WHERE tenant_id = ? AND link_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(link_id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        let spender = row
            .map(|r| crate::row::col::<String>(&r, "spent_links", "spender"))
            .transpose()?;
        Ok(spender.as_deref() == Some(me.as_str()))
    }

    /// What link `link_id` was spent for, if it was.
    pub async fn spent_for(&self, tenant: &TenantId, link_id: &str) -> Result<Option<String>> {
        let row = self
            .store
            .dialect
            .query("SELECT purpose FROM spent_links WHERE tenant_id = ? AND link_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(link_id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| crate::row::col::<String>(&r, "spent_links", "purpose"))
            .transpose()
    }

    /// Whether link `link_id` was spent.
    pub async fn is_spent(&self, tenant: &TenantId, link_id: &str) -> Result<bool> {
        let row = self
            .store
            .dialect
            .query("SELECT link_id FROM spent_links WHERE tenant_id = ? AND link_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(link_id.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Forgets the links of `tenant` spent before `before_ms` (ones that expired long since, so
    /// they could not be used again anyway); how many.
    pub async fn forget_before(&self, tenant: &TenantId, before_ms: i64) -> Result<u64> {
        let done = self
            .store
            .dialect
            .query("DELETE FROM spent_links WHERE tenant_id = ? AND spent_at_ms < ?")
            .bind(tenant.as_str().to_owned())
            .bind(before_ms)
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Gives link `link_id` back (what it was to store could not be stored).
    pub async fn restore(&self, tenant: &TenantId, link_id: &str) -> Result<()> {
        self.store
            .dialect
            .query("DELETE FROM spent_links WHERE tenant_id = ? AND link_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(link_id.to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }
}
