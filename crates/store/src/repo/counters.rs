//! Per-session counters, allocated inside the caller's writing transaction.
//!
//! Invariant: `reserve` increments the counters on the session row before reading them back, so
//! the row lock (MySQL, Postgres) or the database write lock (SQLite, `BEGIN IMMEDIATE`) orders
//! concurrent writers; each gets contiguous blocks no other writer can see or take.

use sqlx::{Any, Row, Transaction};
use workmate_protocol::{SessionId, TenantId};

use crate::{Dialect, Error, Result};

/// The first event `seq` and the first message index reserved (both start at 1).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reserved {
    pub(crate) first_seq: i64,
    pub(crate) first_index: i64,
}

/// Reserves `events` event sequence numbers and `messages` message indexes of a session. Fails
/// with `NotFound` when the tenant has no such session.
pub(crate) async fn reserve(
    tx: &mut Transaction<'static, Any>,
    dialect: Dialect,
    (tenant, session): (&TenantId, &SessionId),
    (events, messages): (i64, i64),
    now_ms: i64,
) -> Result<Reserved> {
    let row = match dialect {
        // One statement where the database can return what it updated.
        Dialect::Sqlite | Dialect::Postgres => {
            dialect
                .query("UPDATE sessions SET last_seq = last_seq + ?, message_count = message_count + ?, updated_at_ms = ? WHERE tenant_id = ? AND session_id = ? RETURNING last_seq, message_count")
                .bind(events)
                .bind(messages)
                .bind(now_ms)
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .fetch_optional(&mut **tx)
                .await?
        }
        Dialect::Mysql => {
            let bumped = dialect
                .query("UPDATE sessions SET last_seq = last_seq + ?, message_count = message_count + ?, updated_at_ms = ? WHERE tenant_id = ? AND session_id = ?")
                .bind(events)
                .bind(messages)
                .bind(now_ms)
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .execute(&mut **tx)
                .await?;
            if bumped.rows_affected() == 0 {
                None
            } else {
                dialect
                    .query("SELECT last_seq, message_count FROM sessions WHERE tenant_id = ? AND session_id = ?")
                    .bind(tenant.as_str().to_owned())
                    .bind(session.as_str().to_owned())
                    .fetch_optional(&mut **tx)
                    .await?
            }
        }
    };
    let row = row.ok_or_else(|| Error::NotFound {
        what: format!("session {session}"),
    })?;
    let last_seq: i64 = row.try_get("last_seq")?;
    let message_count: i64 = row.try_get("message_count")?;
    Ok(Reserved {
        first_seq: last_seq - events + 1,
        first_index: message_count - messages + 1,
    })
}
