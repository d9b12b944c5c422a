//! Long-connection leases: which process holds a platform connection that must be open at most
//! once (the Feishu long connection, Slack Socket Mode).
//!
//! Invariants: at most one holder has a live lease on a name; the token grows whenever the holder
//! changes (never when a holder renews); a lease that lapsed, or that its holder released, may be
//! taken by anyone.

use sqlx::Row;

use crate::{Result, Store};

/// Renews `holder`'s lease, or takes a lapsed or released one (MySQL assigns left to right: the
/// token reads the previous holder).
const TAKE_SQL: &str = "UPDATE connection_leases SET token = CASE WHEN holder = ? THEN token ELSE token + 1 END, holder = ?, until_ms = ? WHERE name = ? AND (holder = ? OR until_ms < ?)";

/// Who holds a connection lease, as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionLease {
    /// The holding process's replica name.
    pub holder: String,
    /// Grows with every change of holder.
    pub token: u64,
    /// When the lease lapses unless renewed (Unix ms).
    pub until_ms: i64,
}

/// Long-connection leases.
#[derive(Debug)]
pub struct ConnectionLeaseRepo<'s> {
    store: &'s Store,
}

impl<'s> ConnectionLeaseRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Takes or renews the lease on `name` for `holder` until `until_ms`; returns its token, or
    /// `None` while another holder's lease is live.
    pub async fn take(&self, name: &str, holder: &str, until_ms: i64) -> Result<Option<u64>> {
        let d = self.store.dialect;
        let mut tx = self.store.begin_write().await?;
        let renewed = d
            .query(TAKE_SQL)
            .bind(holder.to_owned())
            .bind(holder.to_owned())
            .bind(until_ms)
            .bind(name.to_owned())
            .bind(holder.to_owned())
            .bind(self.store.clock_ms())
            .execute(&mut *tx)
            .await?;
        if renewed.rows_affected() == 0 {
            // Nobody ever held it (the row is added), or another holder's lease is live (the
            // row stays as it is: the read below finds the other holder).
            d.insert_ignoring_duplicates(
                "INSERT INTO connection_leases (name, holder, token, until_ms) VALUES (?, ?, 1, ?)",
                "name",
            )
            .bind(name.to_owned())
            .bind(holder.to_owned())
            .bind(until_ms)
            .execute(&mut *tx)
            .await?;
        }
        let row = d
            .query("SELECT holder, token FROM connection_leases WHERE name = ?")
            .bind(name.to_owned())
            .fetch_one(&mut *tx)
            .await?;
        let (held_by, token): (String, i64) = (row.try_get("holder")?, row.try_get("token")?);
        tx.commit().await?;
        Ok((held_by == holder).then(|| u64::try_from(token).unwrap_or_default()))
    }

    /// Gives up `holder`'s lease on `name`, so another process may take it at once.
    pub async fn release(&self, name: &str, holder: &str) -> Result<()> {
        self.store
            .dialect
            .query("UPDATE connection_leases SET until_ms = 0 WHERE name = ? AND holder = ?")
            .bind(name.to_owned())
            .bind(holder.to_owned())
            .execute(&self.store.writes)
            .await?;
        Ok(())
    }

    /// The lease on `name`, live or not, if anyone ever took it.
    pub async fn get(&self, name: &str) -> Result<Option<ConnectionLease>> {
        let row = self
            .store
            .dialect
            .query("SELECT holder, token, until_ms FROM connection_leases WHERE name = ?")
            .bind(name.to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|row| {
            let token: i64 = row.try_get("token")?;
            Ok(ConnectionLease {
                holder: row.try_get("holder")?,
                token: u64::try_from(token).unwrap_or_default(),
                until_ms: row.try_get("until_ms")?,
            })
        })
        .transpose()
    }
}
