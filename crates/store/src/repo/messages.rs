//! Append-only conversation history.
//!
//! Invariant: messages are never rewritten; each gets the next index of its session
//! (`sessions.message_count`, incremented in the inserting transaction), so history reads back in
//! exactly the order it was appended, whichever replica appended it.

use workmate_protocol::{Message, SessionId, TenantId};

use crate::repo::counters::{Counter, reserve};
use crate::row::{json_col, to_i64};
use crate::{Error, Result, Store};

/// Conversation history.
#[derive(Debug)]
pub struct MessageRepo<'s> {
    store: &'s Store,
}

impl<'s> MessageRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Appends messages to a session's history in one transaction; returns the index given to
    /// the first of them (indexes start at 1).
    pub async fn append(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        messages: &[Message],
    ) -> Result<u64> {
        let d = self.store.dialect;
        let count = to_i64(messages.len() as u64);
        let now = self.store.clock_ms();
        let mut tx = self.store.begin_write().await?;
        let first = reserve(
            &mut tx,
            d,
            Counter::MessageIndex,
            (tenant, session),
            count,
            now,
        )
        .await?;
        for (offset, message) in (0_i64..).zip(messages) {
            let body = serde_json::to_value(message)
                .map_err(|e| Error::Invalid(format!("cannot encode message: {e}")))?;
            let role = body
                .get("role")
                .and_then(|r| r.as_str())
                .unwrap_or("unknown")
                .to_owned();
            d.query("INSERT INTO messages (tenant_id, session_id, idx, message_role, body_json, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)")
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .bind(first + offset)
                .bind(role)
                .bind(body.to_string())
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(u64::try_from(first).unwrap_or_default())
    }

    /// A session's whole history, in order.
    pub async fn list(&self, tenant: &TenantId, session: &SessionId) -> Result<Vec<Message>> {
        let rows = self
            .store
            .dialect
            .query("SELECT body_json FROM messages WHERE tenant_id = ? AND session_id = ? ORDER BY idx")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| json_col(row, "messages", "body_json"))
            .collect()
    }
}
