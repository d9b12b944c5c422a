//! Appending a session's history messages and state events, together, in one transaction.
//!
//! Invariant: the messages and events of one call become visible together or not at all, with
//! indexes and sequence numbers taken from the session's counters in the same transaction, and
//! the session's open turn moved by the turn boundaries among the events.

use workmate_protocol::{Event, EventKind, Message, SessionId, TenantId, TurnId};

use crate::repo::counters::reserve;
use crate::row::{to_i64, to_json};
use crate::{Error, Result, Store};

/// What one append wrote.
#[derive(Debug)]
pub(crate) struct Appended {
    /// The index of the first message (when any were appended).
    pub(crate) first_index: u64,
    /// The events with their sequence numbers.
    pub(crate) events: Vec<Event>,
}

/// Appends `messages` to the history and `kinds` as state events of `session`.
pub(crate) async fn append(
    store: &Store,
    (tenant, session): (&TenantId, &SessionId),
    turn: Option<&TurnId>,
    messages: &[Message],
    kinds: Vec<EventKind>,
) -> Result<Appended> {
    let mut tx = store.begin_write().await?;
    let appended = append_in(&mut tx, store, (tenant, session), turn, messages, kinds).await?;
    tx.commit().await?;
    Ok(appended)
}

/// [`append`] inside the caller's transaction, so other writes can commit with it.
pub(crate) async fn append_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    (tenant, session): (&TenantId, &SessionId),
    turn: Option<&TurnId>,
    messages: &[Message],
    kinds: Vec<EventKind>,
) -> Result<Appended> {
    if let Some(transport) = kinds.iter().find(|k| !k.is_state()) {
        return Err(Error::Invalid(format!(
            "{} is a transport event: it is streamed, never stored",
            transport.name()
        )));
    }
    let d = store.dialect;
    let now = store.clock_ms();
    let counts = (to_i64(kinds.len() as u64), to_i64(messages.len() as u64));
    let reserved = reserve(tx, d, (tenant, session), counts, now).await?;
    for (index, message) in (reserved.first_index..).zip(messages) {
        let (role, body) = message_row(message)?;
        d.query("INSERT INTO messages (tenant_id, session_id, idx, message_role, body_json, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(index)
            .bind(role)
            .bind(body)
            .bind(now)
            .execute(&mut **tx)
            .await?;
    }
    let open_turn = kinds.iter().rev().find_map(|kind| match kind {
        EventKind::TurnStart { .. } => Some(turn.map(|t| t.as_str().to_owned())),
        kind if kind.is_terminal() => Some(None),
        _ => None,
    });
    if let Some(open_turn) = open_turn {
        d.query("UPDATE sessions SET open_turn_id = ? WHERE tenant_id = ? AND session_id = ?")
            .bind(open_turn)
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .execute(&mut **tx)
            .await?;
    }
    let mut events = Vec::with_capacity(kinds.len());
    for (seq, kind) in (reserved.first_seq..).zip(kinds) {
        d.query("INSERT INTO session_events (tenant_id, session_id, seq, turn_id, kind, at_ms, body_json) VALUES (?, ?, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(seq)
            .bind(turn.map(|t| t.as_str().to_owned()))
            .bind(kind.name())
            .bind(now)
            .bind(to_json(&kind)?)
            .execute(&mut **tx)
            .await?;
        events.push(Event {
            tenant_id: tenant.clone(),
            session_id: session.clone(),
            seq: u64::try_from(seq).unwrap_or_default(),
            turn_id: turn.cloned(),
            at_ms: now,
            kind,
        });
    }
    Ok(Appended {
        first_index: u64::try_from(reserved.first_index).unwrap_or_default(),
        events,
    })
}

/// A message's role column and its stored JSON body.
pub(crate) fn message_row(message: &Message) -> Result<(String, String)> {
    let body = serde_json::to_value(message)
        .map_err(|e| Error::Invalid(format!("cannot encode message: {e}")))?;
    let role = body
        .get("role")
        .and_then(|r| r.as_str())
        .unwrap_or("unknown")
        .to_owned();
    Ok((role, body.to_string()))
}
