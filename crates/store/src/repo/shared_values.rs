//! Short-lived values every replica reads, when replicas share only the database.
//!
//! Invariants: a key holds one value (a put replaces it and its expiry); an expired value is
//! never returned, whether or not it was purged yet.

use crate::row::col;
use crate::{Dialect, Result, Store};

/// The insert of a value; [`SharedValueRepo::put`] adds the backend's upsert clause.
macro_rules! put_sql {
    () => {
        "INSERT INTO shared_values (value_key, value, expires_at_ms) VALUES (?, ?, ?)"
    };
}

/// Shared values.
#[derive(Debug)]
pub struct SharedValueRepo<'s> {
    store: &'s Store,
}

impl<'s> SharedValueRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Keeps `value` under `key` for `ttl_ms`, replacing what was there.
    pub async fn put(&self, key: &str, value: &str, ttl_ms: i64) -> Result<()> {
        let sql = match self.store.dialect {
            Dialect::Sqlite | Dialect::Postgres => concat!(
                put_sql!(),
                " ON CONFLICT (value_key) DO UPDATE SET value = excluded.value, expires_at_ms = excluded.expires_at_ms"
            ),
            Dialect::Mysql => concat!(
                put_sql!(),
                " ON DUPLICATE KEY UPDATE value = VALUES(value), expires_at_ms = VALUES(expires_at_ms)"
            ),
        };
        self.store
            .dialect
            .query(sql)
            .bind(key.to_owned())
            .bind(value.to_owned())
            .bind(self.store.clock_ms().saturating_add(ttl_ms))
            .execute(&self.store.writes)
            .await?;
        Ok(())
    }

    /// The value under `key`, unless it expired.
    pub async fn get(&self, key: &str) -> Result<Option<String>> {
        let row = self
            .store
            .dialect
            .query("SELECT value FROM shared_values WHERE value_key = ? AND expires_at_ms > ?")
            .bind(key.to_owned())
            .bind(self.store.clock_ms())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| col(&r, "shared_values", "value")).transpose()
    }

    /// Deletes up to `limit` expired values; how many.
    pub async fn purge_expired(&self, limit: u32) -> Result<u64> {
        let now = self.store.clock_ms();
        let keys: Vec<String> = self
            .store
            .dialect
            .query("SELECT value_key FROM shared_values WHERE expires_at_ms <= ? LIMIT ?")
            .bind(now)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?
            .iter()
            .map(|r| col(r, "shared_values", "value_key"))
            .collect::<Result<_>>()?;
        let mut purged = 0;
        for key in keys {
            purged += self
                .store
                .dialect
                .query("DELETE FROM shared_values WHERE value_key = ? AND expires_at_ms <= ?")
                .bind(key)
                .bind(now)
                .execute(&self.store.writes)
                .await?
                .rows_affected();
        }
        Ok(purged)
    }
}
