//! Test helpers: a fresh, empty database per test on the shared test servers.
//!
//! Tests of every crate that needs MySQL or Postgres read the server URL from
//! `WORKMATE_TEST_MYSQL_URL` / `WORKMATE_TEST_POSTGRES_URL`. Each test creates its own database
//! there, so tests run in parallel without seeing each other's rows or schema.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use sqlx::{AnyConnection, Connection, Executor};

use crate::{Clock, Dialect, Error, Result};

/// A clock tests move by hand, the one every crate's tests share (leases, TTLs, schedules and
/// budgets are then tested without sleeping).
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `ms` (Unix milliseconds).
    pub fn at_ms(ms: i64) -> Arc<Self> {
        Arc::new(Self(AtomicI64::new(ms)))
    }

    /// Moves the clock to `ms`.
    pub fn set_ms(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    /// Moves the clock forward by `ms` milliseconds.
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.advance_ms(i64::try_from(by.as_millis()).unwrap_or(i64::MAX));
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The environment variable naming the test server for a dialect (SQLite needs none).
pub fn server_url_variable(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::Sqlite => None,
        Dialect::Mysql => Some("WORKMATE_TEST_MYSQL_URL"),
        Dialect::Postgres => Some("WORKMATE_TEST_POSTGRES_URL"),
    }
}

/// Creates an empty database on the server `server_url` points at and returns its URL.
pub async fn fresh_database(server_url: &str) -> Result<String> {
    let dialect = Dialect::from_url(server_url)?;
    if dialect == Dialect::Sqlite {
        return Err(Error::Invalid(
            "SQLite test databases are files: use a temporary folder".into(),
        ));
    }
    sqlx::any::install_default_drivers();
    let name = format!("wm_test_{}", uuid::Uuid::now_v7().simple());
    let mut conn = AnyConnection::connect(server_url).await?;
    // The name is generated above from hex digits only.
    conn.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await?;
    conn.close().await?;
    let mut url = url::Url::parse(server_url).map_err(|e| Error::InvalidUrl {
        reason: e.to_string(),
    })?;
    url.set_path(&format!("/{name}"));
    Ok(url.to_string())
}

/// Drops a database made by [`fresh_database`]. Close every pool on it first.
pub async fn drop_database(server_url: &str, database_url: &str) -> Result<()> {
    let dialect = Dialect::from_url(server_url)?;
    let parsed = url::Url::parse(database_url).map_err(|e| Error::InvalidUrl {
        reason: e.to_string(),
    })?;
    let name = parsed.path().trim_start_matches('/');
    if !name.starts_with("wm_test_") || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(Error::Invalid(format!("{name:?} is not a test database")));
    }
    let sql = match dialect {
        Dialect::Postgres => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        Dialect::Mysql | Dialect::Sqlite => format!("DROP DATABASE IF EXISTS {name}"),
    };
    let mut conn = AnyConnection::connect(server_url).await?;
    // The name was checked above to be a generated test database name.
    conn.execute(sqlx::AssertSqlSafe(sql)).await?;
    conn.close().await?;
    Ok(())
}
