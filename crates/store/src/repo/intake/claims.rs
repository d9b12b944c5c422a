//! Claiming intake rows: who runs which row, for how long, and giving back what a killed
//! process held.
//!
//! Invariants: a claim is one conditional update (pending and due, or running with a lapsed
//! lease; or, for the replica a row waits for, pending at all), so two workers never hold one
//! row at once; a claim names its replica and when it was made, and a replica that starts gives
//! back only what its name claimed before it started; each sweep claims only its own queue's
//! rows (chat deliveries, or commands sent to the HTTP API).

use super::{Delivery, IntakeKey, IntakeRepo, SELECT, bind_key, from_row, key_from_row};
use crate::Result;

/// The platform name of the rows that hold commands sent to the HTTP API: they share the table
/// with chat deliveries, but a different worker runs them.
pub const API_COMMANDS: &str = "http";

/// Which rows a worker runs: a sweep claims only its own kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Deliveries from chat platforms: every platform but [`API_COMMANDS`].
    Chat,
    /// Commands sent to the HTTP API ([`API_COMMANDS`]).
    ApiCommands,
}

/// Due rows of one queue, oldest first (the platform condition, then the limit, are spliced in).
macro_rules! due_rows {
    ($platform:literal) => {
        concat!(
            "SELECT tenant_id, platform, delivery_id FROM intake WHERE ((state = 'pending' AND not_before_ms <= ?) OR (state = 'running' AND lease_until_ms < ?)) AND ",
            $platform,
            " ORDER BY received_at_ms, tenant_id, platform, delivery_id LIMIT ?"
        )
    };
}

/// A replica's running rows of one queue, given back.
macro_rules! release_rows {
    ($platform:literal) => {
        concat!(
            "UPDATE intake SET state = 'pending', not_before_ms = ?, claimed_by = NULL, lease_until_ms = NULL WHERE state = 'running' AND claimed_by = ? AND claimed_at_ms < ? AND ",
            $platform
        )
    };
}

impl Queue {
    /// The query of this queue's due rows.
    fn due(self) -> &'static str {
        match self {
            Self::Chat => due_rows!("platform <> 'http'"),
            Self::ApiCommands => due_rows!("platform = 'http'"),
        }
    }

    /// The update that gives back a replica's rows of this queue.
    fn release(self) -> &'static str {
        match self {
            Self::Chat => release_rows!("platform <> 'http'"),
            Self::ApiCommands => release_rows!("platform = 'http'"),
        }
    }
}

/// The claim: due pending rows, or running rows whose worker's lease lapsed.
const CLAIM: &str = "UPDATE intake SET state = 'running', claimed_by = ?, claimed_at_ms = ?, lease_until_ms = ?, attempts = attempts + 1 WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND ((state = 'pending' AND not_before_ms <= ?) OR (state = 'running' AND lease_until_ms < ?))";
/// The claim of a row waiting for a retry, now: pending rows, due or not.
const CLAIM_WAITING: &str = "UPDATE intake SET state = 'running', claimed_by = ?, claimed_at_ms = ?, lease_until_ms = ?, attempts = attempts + 1 WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state = 'pending'";

impl IntakeRepo<'_> {
    /// Claims one row for replica `claimer`: pending and due, or running with a lapsed lease (a
    /// worker that died). Sets it running with a lease of `lease_ms` and counts the attempt, in
    /// one conditional update; `None` if someone else holds it, it is not due, or it is finished.
    pub async fn claim(
        &self,
        key: &IntakeKey,
        claimer: &str,
        lease_ms: i64,
    ) -> Result<Option<Delivery>> {
        self.claim_with(CLAIM, true, key, claimer, lease_ms).await
    }

    /// Claims a pending row for replica `claimer` now, even before its retry is due: for the
    /// replica that drives the row's session, told the row waits for it (see
    /// `Signal::DeliveryWaiting`). `None` if it is running or finished.
    pub async fn claim_waiting(
        &self,
        key: &IntakeKey,
        claimer: &str,
        lease_ms: i64,
    ) -> Result<Option<Delivery>> {
        self.claim_with(CLAIM_WAITING, false, key, claimer, lease_ms)
            .await
    }

    /// One claim by the conditional update `sql`; `due`: whether it ends with two parameters
    /// for the time (the due and lapsed conditions of [`CLAIM`]).
    async fn claim_with(
        &self,
        sql: &'static str,
        due: bool,
        key: &IntakeKey,
        claimer: &str,
        lease_ms: i64,
    ) -> Result<Option<Delivery>> {
        let now = self.store.clock_ms();
        let d = self.store.dialect;
        let mut tx = self.store.begin_write().await?;
        let claim = d
            .query(sql)
            .bind(claimer.to_owned())
            .bind(now)
            .bind(now.saturating_add(lease_ms));
        let mut claim = bind_key(claim, key);
        if due {
            claim = claim.bind(now).bind(now);
        }
        let claimed = claim.execute(&mut *tx).await?;
        if claimed.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(None);
        }
        // Read in the claiming transaction, so the row returned is the one this claim wrote.
        let row = bind_key(d.query(SELECT), key)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        row.as_ref().map(from_row).transpose()
    }

    /// Extends the lease of a row still running on attempt `attempt`: the attempt number fences
    /// the claim, since a takeover by another worker counts a new one. `false` once the row is
    /// finished, failed, given back or taken over.
    pub async fn renew_attempt(
        &self,
        key: &IntakeKey,
        attempt: i64,
        lease_ms: i64,
    ) -> Result<bool> {
        let until = self.store.clock_ms().saturating_add(lease_ms);
        let renewed = bind_key(
            self.store.dialect.query(
                "UPDATE intake SET lease_until_ms = ? WHERE tenant_id = ? AND platform = ? AND delivery_id = ? AND state = 'running' AND attempts = ?",
            )
            .bind(until),
            key,
        )
        .bind(attempt)
        .execute(&self.store.writes)
        .await?;
        Ok(renewed.rows_affected() == 1)
    }

    /// Claims up to `limit` due rows of `queue` across all tenants, oldest first: recovery after a restart,
    /// rows an in-process queue could not take, rows of a replica that died. Each is claimed with
    /// the same conditional update as [`IntakeRepo::claim`], so two replicas never both get one.
    pub async fn claim_due(
        &self,
        queue: Queue,
        limit: u32,
        claimer: &str,
        lease_ms: i64,
    ) -> Result<Vec<Delivery>> {
        let now = self.store.clock_ms();
        let rows = self
            .store
            .dialect
            .query(queue.due())
            .bind(now)
            .bind(now)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let key = key_from_row(row)?;
            // A row another replica claimed since the select is simply skipped.
            if let Some(delivery) = self.claim(&key, claimer, lease_ms).await? {
                claimed.push(delivery);
            }
        }
        Ok(claimed)
    }

    /// Gives back every row of `queue` that replica `claimer` claimed before `started_ms`, due at
    /// once: called when that replica starts (its start time), since whatever its name claimed
    /// before was claimed by its previous life, killed mid-run; rows this life claims meanwhile
    /// are left alone. Replica names must be unique among live processes. How many rows were
    /// given back.
    pub async fn release_claims_of(
        &self,
        queue: Queue,
        claimer: &str,
        started_ms: i64,
    ) -> Result<u64> {
        let now = self.store.clock_ms();
        let released = self
            .store
            .dialect
            .query(queue.release())
            .bind(now)
            .bind(claimer.to_owned())
            .bind(started_ms)
            .execute(&self.store.writes)
            .await?;
        Ok(released.rows_affected())
    }
}
