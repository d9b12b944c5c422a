//! Links that work once: a connect or sign-in link is spent when what it connects is stored.
//!
//! Invariant: spending is one conditional insert, so of two uses of one link racing on any
//! replicas exactly one spends it.

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
        let done = self
            .store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO spent_links (tenant_id, link_id, purpose, spent_at_ms) VALUES (?, ?, ?, ?)",
                "link_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(link_id.to_owned())
            .bind(purpose.to_owned())
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
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
