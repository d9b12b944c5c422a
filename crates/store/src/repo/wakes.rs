//! Self-wakes: a session's request to be resumed at a time, when a job completes, or when an
//! event fires.
//!
//! Invariants: a wake fires at most once, because firing is one conditional update from `pending`
//! or `due` to `fired` and only the process whose update changed the row delivers it; completing
//! a job or firing an event only moves `pending` wakes to `due`, so a repeated signal changes
//! nothing.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{SessionId, TenantId, UserId, WakeId};

use crate::row::{col, enum_col, to_word};
use crate::{Result, Store};

/// What a wake waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeKind {
    /// A time.
    Timer,
    /// A job (an automation run) to complete.
    Completion,
    /// A named event.
    Event,
}

/// Where a wake is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeState {
    /// Waiting.
    Pending,
    /// Its job completed or its event fired; it fires on the next tick.
    Due,
    /// Delivered (or given up on); never fires again.
    Fired,
}

/// A stored wake.
#[derive(Clone, Debug, PartialEq)]
pub struct Wake {
    /// Its tenant.
    pub tenant_id: TenantId,
    /// Its id.
    pub id: WakeId,
    /// The session to resume.
    pub session_id: SessionId,
    /// What it waits for.
    pub kind: WakeKind,
    /// Where it is.
    pub state: WakeState,
    /// When a timer fires.
    pub fire_at_ms: Option<i64>,
    /// The job a completion wake waits for.
    pub job_id: Option<String>,
    /// The event an event wake waits for.
    pub event_key: Option<String>,
    /// What the session wanted to remember.
    pub note: String,
    /// When it was set.
    pub created_at_ms: i64,
}

/// A wake to set.
#[derive(Clone, Debug)]
pub struct NewWake {
    /// The session to resume.
    pub session_id: SessionId,
    /// What it waits for.
    pub kind: WakeKind,
    /// When a timer fires.
    pub fire_at_ms: Option<i64>,
    /// The job a completion wake waits for.
    pub job_id: Option<String>,
    /// The event an event wake waits for.
    pub event_key: Option<String>,
    /// What the session wants to remember.
    pub note: String,
}

macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, wake_id, session_id, kind, state, fire_at_ms, job_id, event_key, \
             note, created_at_ms FROM wakes WHERE ",
            $where
        )
    };
}

/// Self-wakes.
#[derive(Debug)]
pub struct WakeRepo<'s> {
    store: &'s Store,
}

impl<'s> WakeRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Sets a wake.
    pub async fn create(&self, tenant: &TenantId, new: &NewWake) -> Result<Wake> {
        let wake = Wake {
            tenant_id: tenant.clone(),
            id: WakeId::new(),
            session_id: new.session_id.clone(),
            kind: new.kind,
            state: WakeState::Pending,
            fire_at_ms: new.fire_at_ms,
            job_id: new.job_id.clone(),
            event_key: new.event_key.clone(),
            note: new.note.clone(),
            created_at_ms: self.store.clock_ms(),
        };
        self.store
            .dialect
            .query("INSERT INTO wakes (tenant_id, wake_id, session_id, kind, state, fire_at_ms, job_id, event_key, note, created_at_ms) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(wake.id.as_str().to_owned())
            .bind(wake.session_id.as_str().to_owned())
            .bind(to_word(&wake.kind)?)
            .bind(wake.fire_at_ms)
            .bind(wake.job_id.clone())
            .bind(wake.event_key.clone())
            .bind(wake.note.clone())
            .bind(wake.created_at_ms)
            .execute(&self.store.pool)
            .await?;
        Ok(wake)
    }

    /// Wakes ready to fire at `now`, across tenants: timers whose time came, and completion or
    /// event wakes whose signal arrived. Oldest first.
    pub async fn ready(&self, now_ms: i64, limit: u32) -> Result<Vec<Wake>> {
        let rows = self
            .store
            .dialect
            .query(select!("(state = 'due') OR (state = 'pending' AND kind = 'timer' AND fire_at_ms <= ?) ORDER BY created_at_ms, wake_id LIMIT ?"))
            .bind(now_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Marks a wake fired; `true` only for the one caller whose update fired it.
    pub async fn mark_fired(&self, tenant: &TenantId, wake: &WakeId) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE wakes SET state = 'fired', fired_at_ms = ? WHERE tenant_id = ? AND wake_id = ? AND state IN ('pending', 'due')")
            .bind(self.store.clock_ms())
            .bind(tenant.as_str().to_owned())
            .bind(wake.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks the pending wakes waiting on `job` due; returns how many.
    pub async fn complete_job(&self, tenant: &TenantId, job: &str) -> Result<u64> {
        let done = self
            .store
            .dialect
            .query("UPDATE wakes SET state = 'due' WHERE tenant_id = ? AND kind = 'completion' AND job_id = ? AND state = 'pending'")
            .bind(tenant.as_str().to_owned())
            .bind(job.to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Marks the pending wakes waiting on event `key` due; returns how many.
    pub async fn fire_event(&self, tenant: &TenantId, key: &str) -> Result<u64> {
        let done = self
            .store
            .dialect
            .query("UPDATE wakes SET state = 'due' WHERE tenant_id = ? AND kind = 'event' AND event_key = ? AND state = 'pending'")
            .bind(tenant.as_str().to_owned())
            .bind(key.to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Marks the pending wakes waiting on event `key` due in sessions `owner` owns; returns how
    /// many (a member's event wakes only their own sessions).
    pub async fn fire_event_for_owner(
        &self,
        tenant: &TenantId,
        key: &str,
        owner: &UserId,
    ) -> Result<u64> {
        let done = self
            .store
            .dialect
            .query("UPDATE wakes SET state = 'due' WHERE tenant_id = ? AND kind = 'event' AND event_key = ? AND state = 'pending' AND session_id IN (SELECT session_id FROM sessions WHERE tenant_id = ? AND owner_user_id = ?)")
            .bind(tenant.as_str().to_owned())
            .bind(key.to_owned())
            .bind(tenant.as_str().to_owned())
            .bind(owner.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// A session's wakes that have not fired, oldest first.
    pub async fn pending(&self, tenant: &TenantId, session: &SessionId) -> Result<Vec<Wake>> {
        let rows = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND session_id = ? AND state IN ('pending', 'due') ORDER BY created_at_ms, wake_id"))
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }
}

fn from_row(row: &AnyRow) -> Result<Wake> {
    const T: &str = "wakes";
    Ok(Wake {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        id: WakeId::from(col::<String>(row, T, "wake_id")?),
        session_id: SessionId::from(col::<String>(row, T, "session_id")?),
        kind: enum_col(row, T, "kind")?,
        state: enum_col(row, T, "state")?,
        fire_at_ms: col(row, T, "fire_at_ms")?,
        job_id: col(row, T, "job_id")?,
        event_key: col(row, T, "event_key")?,
        note: col(row, T, "note")?,
        created_at_ms: col(row, T, "created_at_ms")?,
    })
}
