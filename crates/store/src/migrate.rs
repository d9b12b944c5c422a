//! Schema migrations, embedded in the binary, one folder per dialect.
//!
//! Invariants: a migration runs at most once per database (its version is recorded in
//! `workmate_schema_migrations` in the same step that applies it, inside a transaction where the
//! dialect allows DDL in one); running the migrator again changes nothing; a recorded migration
//! whose text has since changed is an error, never silently skipped or re-run; two replicas that
//! start together do not both migrate (an advisory lock on MySQL and Postgres, the file's write
//! lock on SQLite).

use sqlx::pool::PoolConnection;
use sqlx::{Any, Connection, Executor, Row};
use tracing::info;

use crate::{Dialect, Error, Result, Store};

/// One embedded migration.
struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    mysql: &'static str,
    postgres: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_foundation",
        sqlite: include_str!("../../../migrations/sqlite/0001_foundation.sql"),
        mysql: include_str!("../../../migrations/mysql/0001_foundation.sql"),
        postgres: include_str!("../../../migrations/postgres/0001_foundation.sql"),
    },
    Migration {
        version: 2,
        name: "0002_session_grants",
        sqlite: include_str!("../../../migrations/sqlite/0002_session_grants.sql"),
        mysql: include_str!("../../../migrations/mysql/0002_session_grants.sql"),
        postgres: include_str!("../../../migrations/postgres/0002_session_grants.sql"),
    },
    Migration {
        version: 3,
        name: "0003_usage",
        sqlite: include_str!("../../../migrations/sqlite/0003_usage.sql"),
        mysql: include_str!("../../../migrations/mysql/0003_usage.sql"),
        postgres: include_str!("../../../migrations/postgres/0003_usage.sql"),
    },
    Migration {
        version: 4,
        name: "0004_scheduler",
        sqlite: include_str!("../../../migrations/sqlite/0004_scheduler.sql"),
        mysql: include_str!("../../../migrations/mysql/0004_scheduler.sql"),
        postgres: include_str!("../../../migrations/postgres/0004_scheduler.sql"),
    },
    Migration {
        version: 5,
        name: "0005_intake",
        sqlite: include_str!("../../../migrations/sqlite/0005_intake.sql"),
        mysql: include_str!("../../../migrations/mysql/0005_intake.sql"),
        postgres: include_str!("../../../migrations/postgres/0005_intake.sql"),
    },
    Migration {
        version: 6,
        name: "0006_drop_inbound_dedupe",
        sqlite: include_str!("../../../migrations/sqlite/0006_drop_inbound_dedupe.sql"),
        mysql: include_str!("../../../migrations/mysql/0006_drop_inbound_dedupe.sql"),
        postgres: include_str!("../../../migrations/postgres/0006_drop_inbound_dedupe.sql"),
    },
    Migration {
        version: 7,
        name: "0007_session_leases",
        sqlite: include_str!("../../../migrations/sqlite/0007_session_leases.sql"),
        mysql: include_str!("../../../migrations/mysql/0007_session_leases.sql"),
        postgres: include_str!("../../../migrations/postgres/0007_session_leases.sql"),
    },
    Migration {
        version: 8,
        name: "0008_open_turns",
        sqlite: include_str!("../../../migrations/sqlite/0008_open_turns.sql"),
        mysql: include_str!("../../../migrations/mysql/0008_open_turns.sql"),
        postgres: include_str!("../../../migrations/postgres/0008_open_turns.sql"),
    },
    Migration {
        version: 9,
        name: "0009_connection_leases",
        sqlite: include_str!("../../../migrations/sqlite/0009_connection_leases.sql"),
        mysql: include_str!("../../../migrations/mysql/0009_connection_leases.sql"),
        postgres: include_str!("../../../migrations/postgres/0009_connection_leases.sql"),
    },
    Migration {
        version: 10,
        name: "0010_secrets",
        sqlite: include_str!("../../../migrations/sqlite/0010_secrets.sql"),
        mysql: include_str!("../../../migrations/mysql/0010_secrets.sql"),
        postgres: include_str!("../../../migrations/postgres/0010_secrets.sql"),
    },
    Migration {
        version: 11,
        name: "0011_inbox_approvals",
        sqlite: include_str!("../../../migrations/sqlite/0011_inbox_approvals.sql"),
        mysql: include_str!("../../../migrations/mysql/0011_inbox_approvals.sql"),
        postgres: include_str!("../../../migrations/postgres/0011_inbox_approvals.sql"),
    },
    Migration {
        version: 13,
        name: "0013_user_deactivation",
        sqlite: include_str!("../../../migrations/sqlite/0013_user_deactivation.sql"),
        mysql: include_str!("../../../migrations/mysql/0013_user_deactivation.sql"),
        postgres: include_str!("../../../migrations/postgres/0013_user_deactivation.sql"),
    },
    Migration {
        version: 14,
        name: "0014_identity_binding",
        sqlite: include_str!("../../../migrations/sqlite/0014_identity_binding.sql"),
        mysql: include_str!("../../../migrations/mysql/0014_identity_binding.sql"),
        postgres: include_str!("../../../migrations/postgres/0014_identity_binding.sql"),
    },
    Migration {
        version: 15,
        name: "0015_audit_chain",
        sqlite: include_str!("../../../migrations/sqlite/0015_audit_chain.sql"),
        mysql: include_str!("../../../migrations/mysql/0015_audit_chain.sql"),
        postgres: include_str!("../../../migrations/postgres/0015_audit_chain.sql"),
    },
    Migration {
        version: 16,
        name: "0016_audit_outbox",
        sqlite: include_str!("../../../migrations/sqlite/0016_audit_outbox.sql"),
        mysql: include_str!("../../../migrations/mysql/0016_audit_outbox.sql"),
        postgres: include_str!("../../../migrations/postgres/0016_audit_outbox.sql"),
    },
    Migration {
        version: 17,
        name: "0017_binary_collation",
        sqlite: include_str!("../../../migrations/sqlite/0017_binary_collation.sql"),
        mysql: include_str!("../../../migrations/mysql/0017_binary_collation.sql"),
        postgres: include_str!("../../../migrations/postgres/0017_binary_collation.sql"),
    },
    Migration {
        version: 18,
        name: "0018_session_compaction",
        sqlite: include_str!("../../../migrations/sqlite/0018_session_compaction.sql"),
        mysql: include_str!("../../../migrations/mysql/0018_session_compaction.sql"),
        postgres: include_str!("../../../migrations/postgres/0018_session_compaction.sql"),
    },
    Migration {
        version: 19,
        name: "0019_memory_saving_off",
        sqlite: include_str!("../../../migrations/sqlite/0019_memory_saving_off.sql"),
        mysql: include_str!("../../../migrations/mysql/0019_memory_saving_off.sql"),
        postgres: include_str!("../../../migrations/postgres/0019_memory_saving_off.sql"),
    },
    Migration {
        version: 20,
        name: "0020_personas_and_skills",
        sqlite: include_str!("../../../migrations/sqlite/0020_personas_and_skills.sql"),
        mysql: include_str!("../../../migrations/mysql/0020_personas_and_skills.sql"),
        postgres: include_str!("../../../migrations/postgres/0020_personas_and_skills.sql"),
    },
    Migration {
        version: 21,
        name: "0021_mcp_servers",
        sqlite: include_str!("../../../migrations/sqlite/0021_mcp_servers.sql"),
        mysql: include_str!("../../../migrations/mysql/0021_mcp_servers.sql"),
        postgres: include_str!("../../../migrations/postgres/0021_mcp_servers.sql"),
    },
    Migration {
        version: 22,
        name: "0022_spent_links",
        sqlite: include_str!("../../../migrations/sqlite/0022_spent_links.sql"),
        mysql: include_str!("../../../migrations/mysql/0022_spent_links.sql"),
        postgres: include_str!("../../../migrations/postgres/0022_spent_links.sql"),
    },
    Migration {
        version: 23,
        name: "0023_shared_sessions",
        sqlite: include_str!("../../../migrations/sqlite/0023_shared_sessions.sql"),
        mysql: include_str!("../../../migrations/mysql/0023_shared_sessions.sql"),
        postgres: include_str!("../../../migrations/postgres/0023_shared_sessions.sql"),
    },
    Migration {
        version: 24,
        name: "0024_message_sessions",
        sqlite: include_str!("../../../migrations/sqlite/0024_message_sessions.sql"),
        mysql: include_str!("../../../migrations/mysql/0024_message_sessions.sql"),
        postgres: include_str!("../../../migrations/postgres/0024_message_sessions.sql"),
    },
    Migration {
        version: 25,
        name: "0025_approval_notices_off",
        sqlite: include_str!("../../../migrations/sqlite/0025_approval_notices_off.sql"),
        mysql: include_str!("../../../migrations/mysql/0025_approval_notices_off.sql"),
        postgres: include_str!("../../../migrations/postgres/0025_approval_notices_off.sql"),
    },
    Migration {
        version: 26,
        name: "0026_intake_claimed_by",
        sqlite: include_str!("../../../migrations/sqlite/0026_intake_claimed_by.sql"),
        mysql: include_str!("../../../migrations/mysql/0026_intake_claimed_by.sql"),
        postgres: include_str!("../../../migrations/postgres/0026_intake_claimed_by.sql"),
    },
    Migration {
        version: 27,
        name: "0027_card_posts_confirmed",
        sqlite: include_str!("../../../migrations/sqlite/0027_card_posts_confirmed.sql"),
        mysql: include_str!("../../../migrations/mysql/0027_card_posts_confirmed.sql"),
        postgres: include_str!("../../../migrations/postgres/0027_card_posts_confirmed.sql"),
    },
    Migration {
        version: 28,
        name: "0028_shared_values",
        sqlite: include_str!("../../../migrations/sqlite/0028_shared_values.sql"),
        mysql: include_str!("../../../migrations/mysql/0028_shared_values.sql"),
        postgres: include_str!("../../../migrations/postgres/0028_shared_values.sql"),
    },
];

/// The names of every migration this version knows, oldest first.
pub fn migration_names() -> impl Iterator<Item = &'static str> {
    MIGRATIONS.iter().map(|m| m.name)
}

/// What a migration run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigrationReport {
    /// Migrations applied by this run, by file name.
    pub applied: Vec<&'static str>,
    /// Migrations that were already in place.
    pub already_applied: usize,
}

impl Migration {
    fn sql(&self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::Sqlite => self.sqlite,
            Dialect::Mysql => self.mysql,
            Dialect::Postgres => self.postgres,
        }
    }
}

const LEDGER_DDL: &str = "CREATE TABLE IF NOT EXISTS workmate_schema_migrations (
    version       BIGINT       NOT NULL PRIMARY KEY,
    name          VARCHAR(255) NOT NULL,
    checksum      VARCHAR(32)  NOT NULL,
    applied_at_ms BIGINT       NOT NULL
)";

impl Store {
    /// Brings the schema up to date. Safe to run any number of times, from any number of replicas.
    pub async fn migrate(&self) -> Result<MigrationReport> {
        let mut conn = self.pool.acquire().await?;
        lock(&mut conn, self.dialect).await?;
        let outcome = migrate_locked(&mut conn, self.dialect, self.clock_ms()).await;
        unlock(&mut conn, self.dialect).await?;
        outcome
    }

    /// Migrations this build knows that the database does not have yet.
    pub async fn pending_migrations(&self) -> Result<Vec<&'static str>> {
        let mut conn = self.pool.acquire().await?;
        conn.execute(LEDGER_DDL).await?;
        let applied = applied_versions(&mut conn).await?;
        Ok(MIGRATIONS
            .iter()
            .filter(|m| !applied.iter().any(|(v, _)| *v == m.version))
            .map(|m| m.name)
            .collect())
    }
}

async fn migrate_locked(
    conn: &mut PoolConnection<Any>,
    dialect: Dialect,
    now_ms: i64,
) -> Result<MigrationReport> {
    conn.execute(LEDGER_DDL).await?;
    let applied = applied_versions(conn).await?;
    let mut report = MigrationReport::default();
    for migration in MIGRATIONS {
        let sql = migration.sql(dialect);
        let checksum = checksum(sql);
        if let Some((_, recorded)) = applied.iter().find(|(v, _)| *v == migration.version) {
            if *recorded != checksum {
                return Err(Error::Migration {
                    version: migration.version,
                    name: migration.name,
                    reason: format!(
                        "already applied with checksum {recorded}, but this build has {checksum}; \
                         a migration must never change once released: add a new one instead"
                    ),
                });
            }
            report.already_applied += 1;
            continue;
        }
        apply(conn, dialect, migration, &checksum, now_ms).await?;
        info!(
            version = migration.version,
            name = migration.name,
            "Applied migration."
        );
        report.applied.push(migration.name);
    }
    Ok(report)
}

async fn apply(
    conn: &mut PoolConnection<Any>,
    dialect: Dialect,
    migration: &Migration,
    checksum: &str,
    now_ms: i64,
) -> Result<()> {
    let failed = |e: sqlx::Error| Error::Migration {
        version: migration.version,
        name: migration.name,
        reason: e.to_string(),
    };
    // MySQL commits DDL implicitly, so a transaction there would only pretend.
    let mut tx = conn.begin().await?;
    for statement in statements(migration.sql(dialect)) {
        tx.execute(sqlx::AssertSqlSafe(statement))
            .await
            .map_err(failed)?;
    }
    dialect
        .query("INSERT INTO workmate_schema_migrations (version, name, checksum, applied_at_ms) VALUES (?, ?, ?, ?)")
        .bind(migration.version)
        .bind(migration.name)
        .bind(checksum.to_owned())
        .bind(now_ms)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    tx.commit().await.map_err(failed)
}

async fn applied_versions(conn: &mut PoolConnection<Any>) -> Result<Vec<(i64, String)>> {
    let rows = sqlx::query("SELECT version, checksum FROM workmate_schema_migrations")
        .fetch_all(&mut **conn)
        .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("version")?, row.try_get("checksum")?)))
        .collect()
}

async fn lock(conn: &mut PoolConnection<Any>, dialect: Dialect) -> Result<()> {
    match dialect {
        Dialect::Sqlite => {}
        Dialect::Mysql => {
            let got: i64 = sqlx::query_scalar("SELECT GET_LOCK('workmate_migrate', 120)")
                .fetch_one(&mut **conn)
                .await?;
            if got != 1 {
                return Err(Error::Invalid(
                    "another replica held the migration lock for 120 s; try again".into(),
                ));
            }
        }
        Dialect::Postgres => {
            conn.execute("SELECT pg_advisory_lock(7740001)").await?;
        }
    }
    Ok(())
}

async fn unlock(conn: &mut PoolConnection<Any>, dialect: Dialect) -> Result<()> {
    match dialect {
        Dialect::Sqlite => {}
        Dialect::Mysql => {
            conn.execute("SELECT RELEASE_LOCK('workmate_migrate')")
                .await?;
        }
        Dialect::Postgres => {
            conn.execute("SELECT pg_advisory_unlock(7740001)").await?;
        }
    }
    Ok(())
}

/// Splits a migration file into statements: `;` at the end of a line ends one. Comment-only
/// chunks are dropped. The migration files keep semicolons out of string literals.
fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in sql.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("--") || trimmed.is_empty() {
            continue;
        }
        current.push_str(line);
        current.push('\n');
        if trimmed.ends_with(';') {
            let statement = current.trim().trim_end_matches(';').to_owned();
            out.push(statement);
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// FNV-1a, 64 bit, over the file text: enough to notice an edited migration.
fn checksum(sql: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in sql.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_has_the_same_tables() {
        for migration in MIGRATIONS {
            let tables = |sql: &str| {
                statements(sql)
                    .iter()
                    .filter_map(|s| s.strip_prefix("CREATE TABLE "))
                    .map(|s| s.split_whitespace().next().unwrap_or_default().to_owned())
                    .collect::<Vec<_>>()
            };
            let sqlite = tables(migration.sqlite);
            assert_eq!(sqlite, tables(migration.mysql), "{}", migration.name);
            assert_eq!(sqlite, tables(migration.postgres), "{}", migration.name);
            if migration.version == 1 {
                assert!(sqlite.len() >= 14);
            }
        }
    }

    #[test]
    fn statements_split_on_line_final_semicolons() {
        let parts = statements("-- c\nCREATE TABLE a (x INT);\n\nCREATE INDEX i ON a (x);\n");
        assert_eq!(
            parts,
            vec!["CREATE TABLE a (x INT)", "CREATE INDEX i ON a (x)"]
        );
    }
}
