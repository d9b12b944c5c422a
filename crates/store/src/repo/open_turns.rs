//! Turns a session is in the middle of, as stored: what recovery finishes after a crash.
//!
//! Invariant: a session's open turn is the turn of its newest stored `turn_start`, until an event
//! that ends a turn is stored (the writer and the appends move it in the transaction that stores
//! the event), so after a crash it names exactly the turns that never ended.

use sqlx::Row;
use sqlx::any::AnyRow;
use workmate_protocol::{SessionId, TenantId, TurnId};

use crate::row::to_i64;
use crate::{Result, Store};

/// A session whose newest turn has not ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTurn {
    /// The tenant.
    pub tenant: TenantId,
    /// The session.
    pub session: SessionId,
    /// The turn that started and never ended.
    pub turn: TurnId,
    /// The process that held the session's lease last, if any.
    pub lease_holder: Option<String>,
    /// When the session was last written (milliseconds since the epoch): about when the turn
    /// was cut, for a turn no process drives any more.
    pub updated_at_ms: i64,
}

/// Open turns.
#[derive(Debug)]
pub struct OpenTurnRepo<'s> {
    store: &'s Store,
}

impl<'s> OpenTurnRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Open turns `holder` may drive now: those of sessions whose lease it holds (a process
    /// started again under the same name) or nobody holds any more (the lease ran out at
    /// `now_ms`), oldest first, at most `limit`.
    pub async fn takeable(&self, holder: &str, now_ms: i64, limit: u32) -> Result<Vec<OpenTurn>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, session_id, open_turn_id, lease_holder, updated_at_ms FROM sessions WHERE open_turn_id IS NOT NULL AND (lease_holder IS NULL OR lease_holder = ? OR lease_until_ms < ?) ORDER BY updated_at_ms LIMIT ?")
            .bind(holder.to_owned())
            .bind(now_ms)
            .bind(to_i64(u64::from(limit)))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Open turns whose session's lease ran out at `now_ms`, whoever held it: no live process
    /// drives them (a running turn keeps its lease renewed). Oldest first, at most `limit`.
    pub async fn lapsed(&self, now_ms: i64, limit: u32) -> Result<Vec<OpenTurn>> {
        let rows = self
            .store
            .dialect
            .query("SELECT tenant_id, session_id, open_turn_id, lease_holder, updated_at_ms FROM sessions WHERE open_turn_id IS NOT NULL AND lease_until_ms < ? ORDER BY updated_at_ms LIMIT ?")
            .bind(now_ms)
            .bind(to_i64(u64::from(limit)))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// The session's open turn, if its newest turn has not ended.
    pub async fn get(&self, tenant: &TenantId, session: &SessionId) -> Result<Option<OpenTurn>> {
        let row = self
            .store
            .dialect
            .query("SELECT tenant_id, session_id, open_turn_id, lease_holder, updated_at_ms FROM sessions WHERE tenant_id = ? AND session_id = ? AND open_turn_id IS NOT NULL")
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.as_ref().map(from_row).transpose()
    }
}

fn from_row(row: &AnyRow) -> Result<OpenTurn> {
    Ok(OpenTurn {
        tenant: TenantId::from(row.try_get::<String, _>("tenant_id")?),
        session: SessionId::from(row.try_get::<String, _>("session_id")?),
        turn: TurnId::from(row.try_get::<String, _>("open_turn_id")?),
        lease_holder: row.try_get("lease_holder")?,
        updated_at_ms: row.try_get("updated_at_ms")?,
    })
}
