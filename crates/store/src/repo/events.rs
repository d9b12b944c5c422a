//! Persisted state events.
//!
//! Invariant: a session's state events are numbered 1, 2, 3, … with no gap and no duplicate, however
//! many writers append at once. The number comes from incrementing `sessions.last_seq` in the same
//! transaction that inserts the events, so the session row's lock orders the writers.
//! Transport events (deltas) are refused: they are streamed, never stored.

use sqlx::any::AnyRow;
use workmate_protocol::{Event, EventKind, Message, SessionId, TenantId, TurnId};

use crate::repo::appends;
use crate::repo::intake::{self, IntakeKey};
use crate::repo::tool_calls::{Transition, transition_on};
use crate::row::{col, json_col, to_i64};
use crate::{Error, Result, Store};

/// State events of sessions.
#[derive(Debug)]
pub struct EventRepo<'s> {
    store: &'s Store,
}

impl<'s> EventRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Appends state events to a session in one transaction and returns them with their
    /// sequence numbers and timestamp.
    pub async fn append(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        turn: Option<&TurnId>,
        kinds: Vec<EventKind>,
    ) -> Result<Vec<Event>> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        Ok(
            appends::append(self.store, (tenant, session), turn, &[], kinds)
                .await?
                .events,
        )
    }

    /// Appends history messages and state events in one transaction: a turn's step (a reply and
    /// its `assistant_message`, a tool result and its `tool_finished`) is stored whole or not
    /// at all. Returns the events with their sequence numbers.
    pub async fn append_with_messages(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        turn: Option<&TurnId>,
        messages: &[Message],
        kinds: Vec<EventKind>,
    ) -> Result<Vec<Event>> {
        self.append_with_messages_marking(tenant, session, turn, messages, kinds, &[])
            .await
    }

    /// [`EventRepo::append_with_messages`] that also marks the intake rows `done` in the same
    /// transaction: a delivery is done exactly when the history it produced is stored, so a
    /// crash either keeps both or neither, and a delivery never runs twice or is lost.
    pub async fn append_with_messages_marking(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        turn: Option<&TurnId>,
        messages: &[Message],
        kinds: Vec<EventKind>,
        done: &[IntakeKey],
    ) -> Result<Vec<Event>> {
        let key = (tenant, session);
        let mut tx = self.store.begin_write().await?;
        let appended = appends::append_in(&mut tx, self.store, key, turn, messages, kinds).await?;
        intake::finish_in(&mut tx, self.store, tenant, done).await?;
        tx.commit().await?;
        Ok(appended.events)
    }

    /// Moves a tool call through the ledger and appends its answer (the tool message and its
    /// event) in one transaction, so a restart never finds a call closed in the ledger but
    /// unanswered in the history, or the reverse. The answer is appended even when the ledger
    /// had already moved (the returned flag is then `false`): the history still needs it.
    pub async fn append_call_answer(
        &self,
        (tenant, session): (&TenantId, &SessionId),
        turn: Option<&TurnId>,
        step: &Transition<'_>,
        messages: &[Message],
        kinds: Vec<EventKind>,
    ) -> Result<(bool, Vec<Event>)> {
        let key = (tenant, session);
        let mut tx = self.store.begin_write().await?;
        let moved = transition_on(&mut *tx, self.store, key, step).await?;
        let appended = appends::append_in(&mut tx, self.store, key, turn, messages, kinds).await?;
        tx.commit().await?;
        Ok((moved, appended.events))
    }

    /// Whether the session's stored events announce the parked inbox item `item`
    /// (`inbox_item_parked`): a prompt stored just before a crash may not be.
    pub async fn announces_parked(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        item: &workmate_protocol::InboxItemId,
    ) -> Result<bool> {
        let rows = self
            .store
            .dialect
            .query("SELECT body_json FROM session_events WHERE tenant_id = ? AND session_id = ? AND kind = 'inbox_item_parked'")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        for row in &rows {
            if let EventKind::InboxItemParked { item_id, .. } =
                json_col(row, "session_events", "body_json")?
                && item_id == *item
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A session's state events with `seq > after`, oldest first, at most `limit` of them.
    pub async fn list_after(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        after: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, session_id, seq, turn_id, at_ms, body_json FROM session_events WHERE tenant_id = ? AND session_id = ? AND seq > ? ORDER BY seq LIMIT ?")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(to_i64(after))
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }
}

fn from_row(row: &AnyRow) -> Result<Event> {
    const T: &str = "session_events";
    Ok(Event {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        session_id: SessionId::from(col::<String>(row, T, "session_id")?),
        seq: u64::try_from(col::<i64>(row, T, "seq")?).map_err(|e| Error::corrupt(T, e))?,
        turn_id: col::<Option<String>>(row, T, "turn_id")?.map(TurnId::from),
        at_ms: col(row, T, "at_ms")?,
        kind: json_col(row, T, "body_json")?,
    })
}
