//! Durable intake of chat deliveries: each one is written here before the platform is
//! acknowledged, and runs from here exactly once.
//!
//! Invariants:
//! - one row per (tenant, platform, delivery id): of any number of concurrent accepts of a key,
//!   exactly one is told the delivery is new (the primary key decides, on every backend); a
//!   redelivery of a row that has not expired changes nothing;
//! - a row is processed by whoever claims it, and a claim is one conditional update (pending and
//!   due, or running with a lapsed lease), so two workers never hold one row at once;
//! - `done` and `failed` are final: no claim, retry or late finish moves a row out of them, so a
//!   delivery whose effect was stored never runs again; marking a row done can share the
//!   transaction that stores its effect ([`finish_in`]);
//! - finished rows stay until `expires_at_ms` (the dedupe window), then may be purged, after
//!   which the same delivery id counts as new.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::TenantId;

use crate::row::{col, enum_col, json_col, to_json};
use crate::{Error, Result, Store};

mod claims;

pub use claims::{API_COMMANDS, Queue};

/// A delivery to accept.
#[derive(Clone, Debug)]
pub struct NewDelivery {
    /// The platform it came from (`"slack"`, …).
    pub platform: String,
    /// The platform's id of the delivery (event id, trigger id, …).
    pub delivery_id: String,
    /// What it is, in the caller's words (`"message"`, `"click"`, `"command"`, …).
    pub kind: String,
    /// The neutral inbound, as JSON.
    pub payload: serde_json::Value,
    /// How long the row keeps answering "seen" for redeliveries (the dedupe window).
    pub ttl_ms: i64,
}

/// How the error of a withdrawn row starts.
const WITHDRAWN: &str = "withdrawn: ";

/// Where a delivery is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntakeState {
    /// Waiting to be claimed (possibly not before a retry time).
    Pending,
    /// Claimed by a worker whose lease has not lapsed.
    Running,
    /// Processed; never runs again.
    Done,
    /// Given up on; never runs again.
    Failed,
}

/// Which delivery a row is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IntakeKey {
    /// Its tenant.
    pub tenant_id: TenantId,
    /// The platform it came from.
    pub platform: String,
    /// The platform's id of it.
    pub delivery_id: String,
}

/// A stored delivery.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    /// Its tenant.
    pub tenant_id: TenantId,
    /// The platform it came from.
    pub platform: String,
    /// The platform's id of it.
    pub delivery_id: String,
    /// What it is.
    pub kind: String,
    /// The neutral inbound (`{}` once done).
    pub payload: serde_json::Value,
    /// Where it is.
    pub state: IntakeState,
    /// How many times it was claimed.
    pub attempts: i64,
    /// When it was accepted.
    pub received_at_ms: i64,
    /// The last error recorded for it.
    pub error: Option<String>,
}

impl Delivery {
    /// The row [`IntakeRepo::accept_claimed`] wrote for `new` (running, first attempt), for the
    /// process that stored it, which needs not read it back. `received_at_ms` is the store's
    /// clock read just before the insert.
    pub fn fresh(tenant: &TenantId, new: NewDelivery, received_at_ms: i64) -> Self {
        Self {
            tenant_id: tenant.clone(),
            platform: new.platform,
            delivery_id: new.delivery_id,
            kind: new.kind,
            payload: new.payload,
            state: IntakeState::Running,
            attempts: 1,
            received_at_ms,
            error: None,
        }
    }

    /// Which delivery this is.
    pub fn key(&self) -> IntakeKey {
        IntakeKey {
            tenant_id: self.tenant_id.clone(),
            platform: self.platform.clone(),
            delivery_id: self.delivery_id.clone(),
        }
    }
}

const SELECT: &str = "SELECT tenant_id, platform, delivery_id, kind, payload_json, state, attempts, received_at_ms, error FROM intake WHERE tenant_id = ? AND platform = ? AND delivery_id = ?";

/// Inbound deliveries.
#[derive(Debug)]
pub struct IntakeRepo<'s> {
    store: &'s Store,
}

impl<'s> IntakeRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Writes the delivery as pending; `Ok(true)` if it is new, `Ok(false)` if this
    /// (tenant, platform, delivery id) was already accepted and its row has not expired (a
    /// redelivery: acknowledge it, do nothing). A done or failed row past its expiry is replaced.
    /// Of concurrent accepts of one key exactly one gets `true`, on every backend.
    pub async fn accept(&self, tenant: &TenantId, new: &NewDelivery) -> Result<bool> {
        self.insert(tenant, new, None).await
    }

    /// Like [`IntakeRepo::accept`], but the new row is already claimed by the caller, replica
    /// `claimer` (running, first attempt, leased for `lease_ms`): for deliveries run while their
    /// request waits, which no worker may take in between.
    pub async fn accept_claimed(
        &self,
        tenant: &TenantId,
        new: &NewDelivery,
        claimer: &str,
        lease_ms: i64,
    ) -> Result<bool> {
        self.insert(tenant, new, Some((claimer, lease_ms))).await
    }

    async fn insert(
        &self,
        tenant: &TenantId,
        new: &NewDelivery,
        claim: Option<(&str, i64)>,
    ) -> Result<bool> {
        // The common case, a new delivery, is one insert. Only a key already present is checked
        // for an expired, finished row, which is replaced: it counts as new.
        if self.try_insert(tenant, new, claim).await? {
            return Ok(true);
        }
        let expired = self
            .store
            .dialect
            .query("DELETE FROM intake WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state IN ('done', 'failed') AND expires_at_ms <= ?")
            .bind(tenant.as_str().to_owned())
            .bind(new.platform.clone())
            .bind(new.delivery_id.clone())
            .bind(self.store.clock_ms())
            .execute(&self.store.writes)
            .await?;
        if expired.rows_affected() == 0 {
            return Ok(false);
        }
        // Of concurrent replacements, the primary key again lets one through.
        self.try_insert(tenant, new, claim).await
    }

    /// One insert; `false` when the key is taken.
    async fn try_insert(
        &self,
        tenant: &TenantId,
        new: &NewDelivery,
        claim: Option<(&str, i64)>,
    ) -> Result<bool> {
        let now = self.store.clock_ms();
        let inserted = self
            .store
            .dialect
            .query("INSERT INTO intake (tenant_id, platform, delivery_id, kind, payload_json, state, attempts, not_before_ms, claimed_by, claimed_at_ms, lease_until_ms, received_at_ms, finished_at_ms, expires_at_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL)")
            .bind(tenant.as_str().to_owned())
            .bind(new.platform.clone())
            .bind(new.delivery_id.clone())
            .bind(new.kind.clone())
            .bind(to_json(&new.payload)?)
            .bind(if claim.is_some() { "running" } else { "pending" })
            .bind(i64::from(claim.is_some()))
            .bind(now)
            .bind(claim.map(|(claimer, _)| claimer.to_owned()))
            .bind(claim.map(|_| now))
            .bind(claim.map(|(_, lease)| now.saturating_add(lease)))
            .bind(now)
            .bind(now.saturating_add(new.ttl_ms))
            .execute(&self.store.writes)
            .await;
        match inserted {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The messages of `platform` in `tenant` accepted since `since_ms` that have not reached a
    /// session yet (pending, or claimed by a worker), newest first, at most `limit`: where a
    /// recalled message may wait.
    pub async fn waiting_messages(
        &self,
        tenant: &TenantId,
        platform: &str,
        since_ms: i64,
        limit: u32,
    ) -> Result<Vec<Delivery>> {
        let rows = self
            .store
            .dialect
            .query(concat!(
                "SELECT tenant_id, platform, delivery_id, kind, payload_json, state, attempts, received_at_ms, error FROM intake ",
                "WHERE tenant_id = ? AND platform = ? AND kind = 'message' AND state IN ('pending', 'running') AND received_at_ms >= ? ",
                "ORDER BY received_at_ms DESC LIMIT ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(platform.to_owned())
            .bind(since_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Finishes an unfinished row without running it, recording `why` (a worker holding it finds
    /// it done before it hands it on, see [`IntakeRepo::is_withdrawn`]); `false` when it is
    /// finished already.
    pub async fn withdraw(&self, key: &IntakeKey, why: &str) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE intake SET state = 'done', payload_json = '{}', error = ?, finished_at_ms = ?, lease_until_ms = NULL WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state IN ('pending', 'running')")
            .bind(format!("{WITHDRAWN}{why}"))
            .bind(self.store.clock_ms())
            .bind(key.tenant_id.as_str().to_owned())
            .bind(key.platform.clone())
            .bind(key.delivery_id.clone())
            .execute(&self.store.writes)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Whether the row was withdrawn ([`IntakeRepo::withdraw`]) while a worker held it.
    pub async fn is_withdrawn(&self, key: &IntakeKey) -> Result<bool> {
        Ok(self.get(key).await?.is_some_and(|d| {
            d.state == IntakeState::Done
                && d.error.as_deref().is_some_and(|e| e.starts_with(WITHDRAWN))
        }))
    }

    /// Extends the lease of a row still running (its worker is alive and waiting on the engine);
    /// `false` once the row is finished, failed, or no longer running, so the caller stops.
    pub async fn renew(&self, key: &IntakeKey, lease_ms: i64) -> Result<bool> {
        let until = self.store.clock_ms().saturating_add(lease_ms);
        let done = bind_key(
            self.store.dialect.query(
                "UPDATE intake SET lease_until_ms = ? WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state = 'running'",
            )
            .bind(until),
            key,
        )
        .execute(&self.store.writes)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks the row done and clears its payload. Idempotent; a failed row stays failed.
    pub async fn finish(&self, key: &IntakeKey) -> Result<()> {
        let mut conn = self.store.writes.acquire().await?;
        finish_on(&mut conn, self.store, key).await
    }

    /// Gives a claimed row back for another attempt after `delay_ms`, recording the error. A row
    /// that is no longer running (finished meanwhile) is left as it is.
    pub async fn retry_later(&self, key: &IntakeKey, delay_ms: i64, error: &str) -> Result<()> {
        let now = self.store.clock_ms();
        bind_key(
            self.store
                .dialect
                .query("UPDATE intake SET state = 'pending', not_before_ms = ?, lease_until_ms = NULL, error = ? WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state = 'running'")
                .bind(now.saturating_add(delay_ms))
                .bind(error.to_owned()),
            key,
        )
        .execute(&self.store.writes)
        .await?;
        Ok(())
    }

    /// Marks the row failed for good with the error. A done row stays done.
    pub async fn fail(&self, key: &IntakeKey, error: &str) -> Result<()> {
        bind_key(
            self.store
                .dialect
                .query("UPDATE intake SET state = 'failed', lease_until_ms = NULL, finished_at_ms = ?, error = ? WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state IN ('pending', 'running')")
                .bind(self.store.clock_ms())
                .bind(error.to_owned()),
            key,
        )
        .execute(&self.store.writes)
        .await?;
        Ok(())
    }

    /// The row, for checks and tests.
    pub async fn get(&self, key: &IntakeKey) -> Result<Option<Delivery>> {
        let row = bind_key(self.store.dialect.query(SELECT), key)
            .fetch_optional(&self.store.pool)
            .await?;
        row.as_ref().map(from_row).transpose()
    }

    /// Deletes done and failed rows whose expiry passed, at most `limit` of them, across
    /// tenants; returns how many.
    pub async fn purge_expired(&self, limit: u32) -> Result<u64> {
        let d = self.store.dialect;
        let now = self.store.clock_ms();
        // No `DELETE … LIMIT` works on all three backends, so the keys are picked first and each
        // delete repeats the condition.
        let rows = d
            .query("SELECT tenant_id, platform, delivery_id FROM intake WHERE expires_at_ms <= ? AND state IN ('done', 'failed') ORDER BY expires_at_ms LIMIT ?")
            .bind(now)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        if rows.is_empty() {
            return Ok(0);
        }
        let mut tx = self.store.begin_write().await?;
        let mut purged = 0;
        for row in &rows {
            let key = key_from_row(row)?;
            let done = bind_key(
                d.query("DELETE FROM intake WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND expires_at_ms <= ? AND state IN ('done', 'failed')"),
                &key,
            )
            .bind(now)
            .execute(&mut *tx)
            .await?;
            purged += done.rows_affected();
        }
        tx.commit().await?;
        Ok(purged)
    }

    /// Rows pending or running, across tenants, for a gauge.
    pub async fn unfinished(&self) -> Result<i64> {
        let row = self
            .store
            .dialect
            .query("SELECT COUNT(*) AS n FROM intake WHERE state IN ('pending', 'running')")
            .fetch_one(&self.store.pool)
            .await?;
        col(&row, "intake", "n")
    }
}

/// Marks rows done inside the caller's transaction, so a delivery is done exactly when the
/// history it produced is stored. Every key must belong to `tenant`.
pub(crate) async fn finish_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    tenant: &TenantId,
    keys: &[IntakeKey],
) -> Result<()> {
    for key in keys {
        if &key.tenant_id != tenant {
            return Err(Error::Invalid(format!(
                "delivery {} of tenant {} cannot be finished by a write of tenant {tenant}",
                key.delivery_id, key.tenant_id
            )));
        }
        finish_on(tx, store, key).await?;
    }
    Ok(())
}

async fn finish_on(conn: &mut sqlx::AnyConnection, store: &Store, key: &IntakeKey) -> Result<()> {
    bind_key(
        store
            .dialect
            .query("UPDATE intake SET state = 'done', lease_until_ms = NULL, finished_at_ms = ?, payload_json = '{}' WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state IN ('pending', 'running')")
            .bind(store.clock_ms()),
        key,
    )
    .execute(conn)
    .await?;
    Ok(())
}

type AnyQuery = sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments>;

/// Binds the key's three columns, in key order.
fn bind_key(query: AnyQuery, key: &IntakeKey) -> AnyQuery {
    query
        .bind(key.tenant_id.as_str().to_owned())
        .bind(key.platform.clone())
        .bind(key.delivery_id.clone())
}

fn key_from_row(row: &AnyRow) -> Result<IntakeKey> {
    const T: &str = "intake";
    Ok(IntakeKey {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        platform: col(row, T, "platform")?,
        delivery_id: col(row, T, "delivery_id")?,
    })
}

fn from_row(row: &AnyRow) -> Result<Delivery> {
    const T: &str = "intake";
    Ok(Delivery {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        platform: col(row, T, "platform")?,
        delivery_id: col(row, T, "delivery_id")?,
        kind: col(row, T, "kind")?,
        payload: json_col(row, T, "payload_json")?,
        state: enum_col(row, T, "state")?,
        attempts: col(row, T, "attempts")?,
        received_at_ms: col(row, T, "received_at_ms")?,
        error: col(row, T, "error")?,
    })
}
