//! Session writer leases: which process drives a session.
//!
//! Invariants: at most one holder has a live lease on a session; the token grows whenever the
//! holder changes (never when a holder renews), and every step of a session is stored only under
//! the session's current token (see the writer's fence), so a process that lost its lease (it
//! stalled past the expiry and another took over) can no longer write to the session.

use sqlx::Row;
use workmate_protocol::{SessionId, TenantId};

use crate::row::{col, to_i64};
use crate::{Counters, Result, Store};

/// The take: a free or lapsed lease, or `holder`'s own. The token grows only when the holder
/// changes (MySQL assigns left to right: the token reads the previous holder).
macro_rules! take_sql {
    () => {
        "UPDATE sessions SET lease_token = CASE WHEN lease_holder = ? THEN lease_token ELSE lease_token + 1 END, lease_holder = ?, lease_until_ms = ? WHERE tenant_id = ? AND session_id = ? AND (lease_holder IS NULL OR lease_holder = ? OR lease_until_ms < ?)"
    };
}

fn token_of(row: &sqlx::any::AnyRow) -> Result<(u64, Counters)> {
    let count = |column: &str| -> Result<u64> {
        let value: i64 = row.try_get(column)?;
        Ok(u64::try_from(value).unwrap_or_default())
    };
    Ok((
        count("lease_token")?,
        Counters {
            last_seq: count("last_seq")?,
            message_count: count("message_count")?,
        },
    ))
}

/// Session writer leases.
#[derive(Debug)]
pub struct LeaseRepo<'s> {
    store: &'s Store,
}

impl<'s> LeaseRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Takes or renews the lease on a session for `holder` until `until_ms`; returns its token,
    /// or `None` while another holder's lease is live (or the session does not exist).
    pub async fn take(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        holder: &str,
        until_ms: i64,
    ) -> Result<Option<u64>> {
        let taken = self.take_counted(tenant, session, holder, until_ms).await?;
        Ok(taken.map(|(token, _)| token))
    }

    /// [`LeaseRepo::take`], with the session's stored counters as of the take: a holder whose
    /// copy of the session is behind them (another holder wrote meanwhile) must read it again
    /// before it writes. One statement where the backend has `RETURNING`; a transaction of two
    /// on MySQL.
    pub async fn take_counted(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        holder: &str,
        until_ms: i64,
    ) -> Result<Option<(u64, Counters)>> {
        let d = self.store.dialect;
        let take = |template: &'static str| {
            d.query(template)
                .bind(holder.to_owned())
                .bind(holder.to_owned())
                .bind(until_ms)
                .bind(tenant.as_str().to_owned())
                .bind(session.as_str().to_owned())
                .bind(holder.to_owned())
                .bind(self.store.clock_ms())
        };
        if d.has_returning() {
            let rows = take(concat!(
                take_sql!(),
                " RETURNING lease_token, last_seq, message_count"
            ))
            .fetch_all(&self.store.writes)
            .await?;
            return rows.first().map(token_of).transpose();
        }
        let mut tx = self.store.begin_write().await?;
        let taken = take(take_sql!()).execute(&mut *tx).await?;
        if taken.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(None);
        }
        let row = d
            .query("SELECT lease_token, last_seq, message_count FROM sessions WHERE tenant_id = ? AND session_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_one(&mut *tx)
            .await?;
        let taken = token_of(&row)?;
        tx.commit().await?;
        Ok(Some(taken))
    }

    /// The sessions whose lease `holder` took and never gave up (see [`LeaseRepo::release`]),
    /// lapsed or not, at most `limit`: for a replica that starts again under its name, the
    /// sessions its previous life was driving when it stopped without releasing them.
    pub async fn held_by(&self, holder: &str, limit: u32) -> Result<Vec<(TenantId, SessionId)>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, session_id FROM sessions WHERE lease_holder = ? AND lease_until_ms > 0 ORDER BY lease_until_ms DESC LIMIT ?")
            .bind(holder.to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    TenantId::from(col::<String>(row, "sessions", "tenant_id")?),
                    SessionId::from(col::<String>(row, "sessions", "session_id")?),
                ))
            })
            .collect()
    }

    /// Gives up `holder`'s lease on a session, so another process may take it at once.
    pub async fn release(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        holder: &str,
    ) -> Result<()> {
        self.store
            .dialect
            .query("UPDATE sessions SET lease_until_ms = 0 WHERE tenant_id = ? AND session_id = ? AND lease_holder = ?")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(holder.to_owned())
            .execute(&self.store.writes)
            .await?;
        Ok(())
    }
}

/// The token a step must carry to be stored (tests and tools that write without a lease use 0,
/// the token of a session nobody ever leased).
pub(crate) fn token_param(token: u64) -> i64 {
    to_i64(token)
}
