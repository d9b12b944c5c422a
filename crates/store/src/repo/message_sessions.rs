//! Which conversation a chat message went to, by the platform's id of the message: what a
//! recall of the message needs to find the turn it started.
//!
//! Invariant: the first conversation recorded for a message stands (a redelivery records
//! nothing new); rows are only for finding, never for deciding who may act.

use workmate_protocol::{SessionId, TenantId};

use crate::row::col;
use crate::{Result, Store};

/// Messages and their conversations.
#[derive(Debug)]
pub struct MessageSessionRepo<'s> {
    store: &'s Store,
}

impl<'s> MessageSessionRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records that `platform`'s message `message_ref` went to `session`.
    pub async fn record(
        &self,
        tenant: &TenantId,
        platform: &str,
        message_ref: &str,
        session: &SessionId,
    ) -> Result<()> {
        self.store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO message_sessions (tenant_id, platform, message_ref, session_id, created_at_ms) VALUES (?, ?, ?, ?, ?)",
                "session_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(message_ref.to_owned())
            .bind(session.as_str().to_owned())
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// The conversation `platform`'s message `message_ref` went to, and when that was recorded
    /// (store clock, ms), if it was.
    pub async fn session_of(
        &self,
        tenant: &TenantId,
        platform: &str,
        message_ref: &str,
    ) -> Result<Option<(SessionId, i64)>> {
        let row = self
            .store
            .dialect
            .query("SELECT session_id, created_at_ms FROM message_sessions WHERE tenant_id = ? AND platform = ? AND message_ref = ?")
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(message_ref.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| {
            let session = col::<String>(&r, "message_sessions", "session_id")?;
            let at = col::<i64>(&r, "message_sessions", "created_at_ms")?;
            Ok((SessionId::from(session), at))
        })
        .transpose()
    }

    /// Forgets messages recorded before `before_ms`, in every tenant; how many.
    pub async fn forget_before(&self, before_ms: i64) -> Result<u64> {
        let done = self
            .store
            .dialect
            .query("DELETE FROM message_sessions WHERE created_at_ms < ?")
            .bind(before_ms)
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected())
    }
}
