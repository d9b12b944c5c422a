//! Persisted state events.
//!
//! Invariant: a session's state events are numbered 1, 2, 3, … with no gap and no duplicate, however
//! many writers append at once. The number comes from incrementing `sessions.last_seq` in the same
//! transaction that inserts the events, so the session row's lock orders the writers.
//! Transport events (deltas) are refused: they are streamed, never stored.

use sqlx::any::AnyRow;
use workmate_protocol::{Event, EventKind, SessionId, TenantId, TurnId};

use crate::repo::counters::{Counter, reserve};
use crate::row::{col, json_col, to_i64, to_json};
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
        if let Some(transport) = kinds.iter().find(|k| !k.is_state()) {
            return Err(Error::Invalid(format!(
                "{} is a transport event: it is streamed, never stored",
                transport.name()
            )));
        }
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        let d = self.store.dialect;
        let count = to_i64(kinds.len() as u64);
        let at_ms = self.store.clock_ms();
        let mut tx = self.store.begin_write().await?;
        let first = reserve(
            &mut tx,
            d,
            Counter::EventSeq,
            (tenant, session),
            count,
            at_ms,
        )
        .await?;
        let mut events = Vec::with_capacity(kinds.len());
        for (offset, kind) in (0_i64..).zip(kinds) {
            let seq = first + offset;
            d.query("INSERT INTO session_events (tenant_id, session_id, seq, turn_id, kind, at_ms, body_json) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .bind(seq)
                .bind(turn.map(|t| t.as_str().to_owned()))
                .bind(kind.name())
                .bind(at_ms)
                .bind(to_json(&kind)?)
                .execute(&mut *tx)
                .await?;
            events.push(Event {
                tenant_id: tenant.clone(),
                session_id: session.clone(),
                seq: u64::try_from(seq).unwrap_or_default(),
                turn_id: turn.cloned(),
                at_ms,
                kind,
            });
        }
        tx.commit().await?;
        Ok(events)
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
