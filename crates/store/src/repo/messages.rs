//! Append-only conversation history.
//!
//! Invariant: messages are never rewritten; each gets the next index of its session
//! (`sessions.message_count`, incremented in the inserting transaction), so history reads back in
//! exactly the order it was appended, whichever replica appended it.

use workmate_protocol::{Message, SessionId, TenantId};

use crate::repo::appends;
use crate::row::json_col;
use crate::{Result, Store};

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
        Ok(
            appends::append(self.store, (tenant, session), None, messages, Vec::new())
                .await?
                .first_index,
        )
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
