//! The approvers a platform can reach, and whether each wants to be told of prompts.
//!
//! Invariant: only active users holding the approver or admin role, bound to an account on that
//! platform, are listed; a person who turned notices off (`/workmate notify off`) is left out
//! until they turn them on again.

use workmate_protocol::{TenantId, UserId};

use super::opt_outs::OptOut;
use crate::row::col;
use crate::{Result, Store};

/// Who turned approval notices off (`/workmate notify off`).
const NOTICES: OptOut = OptOut {
    select: "SELECT since_ms FROM approval_notices_off WHERE tenant_id = ? AND user_id = ?",
    delete: "DELETE FROM approval_notices_off WHERE tenant_id = ? AND user_id = ?",
    insert: "INSERT INTO approval_notices_off (tenant_id, user_id, since_ms) VALUES (?, ?, ?)",
};

/// Approvers listed at most.
const MAX_APPROVERS: i64 = 200;

/// Approvers and their notice preference.
#[derive(Debug)]
pub struct ApproverRepo<'s> {
    store: &'s Store,
}

impl<'s> ApproverRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The tenant's active approvers and admins with an account on `platform` who want
    /// notices: each with their platform user id, by user id.
    pub async fn to_notify(
        &self,
        tenant: &TenantId,
        platform: &str,
    ) -> Result<Vec<(UserId, String)>> {
        let rows = self
            .store
            .dialect
            .query(
                "SELECT u.user_id, p.platform_user_id FROM users u \
                 JOIN platform_identities p ON p.tenant_id = u.tenant_id AND p.user_id = u.user_id AND p.platform = ? \
                 WHERE u.tenant_id = ? AND u.disabled_at_ms IS NULL AND u.user_role IN ('approver', 'admin') \
                 AND NOT EXISTS (SELECT 1 FROM approval_notices_off o WHERE o.tenant_id = u.tenant_id AND o.user_id = u.user_id) \
                 ORDER BY u.user_id, p.platform_user_id LIMIT ?",
            )
            .bind(platform.to_owned())
            .bind(tenant.as_str().to_owned())
            .bind(MAX_APPROVERS)
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    UserId::from(col::<String>(row, "users", "user_id")?),
                    col::<String>(row, "platform_identities", "platform_user_id")?,
                ))
            })
            .collect()
    }

    /// Whether `user` is told of prompts that wait for them (the default).
    pub async fn notices_on(&self, tenant: &TenantId, user: &UserId) -> Result<bool> {
        NOTICES.is_on(self.store, tenant, user).await
    }

    /// Turns `user`'s notices on or off.
    pub async fn set_notices(&self, tenant: &TenantId, user: &UserId, on: bool) -> Result<()> {
        NOTICES.set(self.store, tenant, user, on).await
    }
}
