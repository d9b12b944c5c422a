//! Per-person switches that are on unless the person turned them off (memory saving, approval
//! notices), each kept as a row of its own table while it is off: no row means on.
//!
//! Invariant: turning a switch off twice keeps the first row (and its `since_ms`); turning it on
//! deletes the row, whether or not there was one.

use workmate_protocol::{TenantId, UserId};

use crate::{Result, Store};

/// One switch: the statements of its table (`tenant_id`, `user_id`, `since_ms`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OptOut {
    /// Reads the row.
    pub(crate) select: &'static str,
    /// Deletes the row (on).
    pub(crate) delete: &'static str,
    /// Inserts the row (off); a duplicate is ignored.
    pub(crate) insert: &'static str,
}

impl OptOut {
    /// Whether the switch is on for `user`.
    pub(crate) async fn is_on(
        self,
        store: &Store,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool> {
        let row = store
            .dialect
            .query(self.select)
            .bind(tenant.as_str().to_owned())
            .bind(user.as_str().to_owned())
            .fetch_optional(&store.pool)
            .await?;
        Ok(row.is_none())
    }

    /// Turns the switch on or off for `user`.
    pub(crate) async fn set(
        self,
        store: &Store,
        tenant: &TenantId,
        user: &UserId,
        on: bool,
    ) -> Result<()> {
        let query = if on {
            store
                .dialect
                .query(self.delete)
                .bind(tenant.as_str().to_owned())
                .bind(user.as_str().to_owned())
        } else {
            store
                .dialect
                .insert_ignoring_duplicates(self.insert, "since_ms")
                .bind(tenant.as_str().to_owned())
                .bind(user.as_str().to_owned())
                .bind(store.clock_ms())
        };
        query.execute(&store.pool).await?;
        Ok(())
    }
}
