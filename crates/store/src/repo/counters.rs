//! Per-session counters, allocated inside the caller's writing transaction.
//!
//! Invariant: `reserve` increments the counter on the session row before reading it back, so the
//! row lock (MySQL, Postgres) or the database write lock (SQLite, `BEGIN IMMEDIATE`) orders
//! concurrent writers; each gets a contiguous block no other writer can see or take.

use sqlx::{Any, Row, Transaction};
use workmate_protocol::{SessionId, TenantId};

use crate::{Dialect, Error, Result};

/// A counter kept on the session row.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Counter {
    /// `last_seq`: state event sequence numbers.
    EventSeq,
    /// `message_count`: history indexes.
    MessageIndex,
}

impl Counter {
    fn bump_sql(self) -> &'static str {
        match self {
            Self::EventSeq => {
                "UPDATE sessions SET last_seq = last_seq + ?, updated_at_ms = ? WHERE tenant_id = ? AND session_id = ?"
            }
            Self::MessageIndex => {
                "UPDATE sessions SET message_count = message_count + ?, updated_at_ms = ? WHERE tenant_id = ? AND session_id = ?"
            }
        }
    }

    fn read_sql(self) -> &'static str {
        match self {
            Self::EventSeq => {
                "SELECT last_seq AS counter FROM sessions WHERE tenant_id = ? AND session_id = ?"
            }
            Self::MessageIndex => {
                "SELECT message_count AS counter FROM sessions WHERE tenant_id = ? AND session_id = ?"
            }
        }
    }
}

/// Reserves `count` consecutive values of a session's counter; returns the first (values start
/// at 1). Fails with `NotFound` when the tenant has no such session.
pub(crate) async fn reserve(
    tx: &mut Transaction<'static, Any>,
    dialect: Dialect,
    counter: Counter,
    (tenant, session): (&TenantId, &SessionId),
    count: i64,
    now_ms: i64,
) -> Result<i64> {
    let bumped = dialect
        .query(counter.bump_sql())
        .bind(count)
        .bind(now_ms)
        .bind(tenant.as_str().to_owned())
        .bind(session.as_str().to_owned())
        .execute(&mut **tx)
        .await?;
    if bumped.rows_affected() == 0 {
        return Err(Error::NotFound {
            what: format!("session {session}"),
        });
    }
    let last: i64 = dialect
        .query(counter.read_sql())
        .bind(tenant.as_str().to_owned())
        .bind(session.as_str().to_owned())
        .fetch_one(&mut **tx)
        .await?
        .try_get("counter")?;
    Ok(last - count + 1)
}
