//! Token usage: one record per model call, summed into reports and daily budgets.
//!
//! Each record carries the UTC day of its timestamp (`YYYY-MM-DD`), computed here, so "tokens
//! today" is an indexed equality rather than date arithmetic in three SQL dialects.
//!
//! Sums of `BIGINT` come back as `NUMERIC`/`DECIMAL` on Postgres and MySQL, which the `Any`
//! driver cannot decode as integers, so every aggregate is cast back to a 64-bit integer. The
//! cast's type name is the one dialect difference here; [`int_sql!`] spells each statement once
//! and [`Statements::of`] picks the dialect's copy.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{SessionId, TenantId, UserId};

use crate::row::{col, new_id, to_i64};
use crate::{Dialect, Error, Result, Store};

/// One model call's token counts, to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewUsage {
    /// The session the call served.
    pub session_id: SessionId,
    /// The person it is billed to, if any (automations may run for nobody in particular).
    pub user_id: Option<UserId>,
    /// The model that answered.
    pub model: String,
    /// Input (prompt) tokens, not counting cache reads.
    pub input: u64,
    /// Output (completion) tokens.
    pub output: u64,
    /// Input tokens served from the provider's prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_write: u64,
}

/// What [`UsageRepo::totals`] groups by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageGroup {
    /// One total per user id (`""` for calls billed to nobody).
    User,
    /// One total per model.
    Model,
}

/// Summed token counts for one user or one model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotal {
    /// The user id (`""` for none) or the model, per the grouping asked for.
    pub key: String,
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Model calls.
    pub calls: u64,
}

/// Token usage records.
#[derive(Debug)]
pub struct UsageRepo<'s> {
    store: &'s Store,
}

/// Writes an aggregate statement with `$int` as the name of the 64-bit integer type for casts.
macro_rules! int_sql {
    (totals, $key:literal, $int:literal) => {
        concat!(
            "SELECT ",
            $key,
            " AS group_key, ",
            "CAST(COALESCE(SUM(input_tokens), 0) AS ",
            $int,
            ") AS input, ",
            "CAST(COALESCE(SUM(output_tokens), 0) AS ",
            $int,
            ") AS output, ",
            "CAST(COALESCE(SUM(cache_read_tokens), 0) AS ",
            $int,
            ") AS cache_read, ",
            "CAST(COALESCE(SUM(cache_write_tokens), 0) AS ",
            $int,
            ") AS cache_write, ",
            "CAST(COUNT(*) AS ",
            $int,
            ") AS calls ",
            "FROM usage_records WHERE tenant_id = ? AND at_ms >= ? AND at_ms < ? ",
            "GROUP BY ",
            $key,
            " ORDER BY ",
            $key
        )
    };
    (day, $filter:literal, $int:literal) => {
        concat!(
            "SELECT CAST(COALESCE(SUM(input_tokens + output_tokens + cache_read_tokens + ",
            "cache_write_tokens), 0) AS ",
            $int,
            ") AS tokens ",
            "FROM usage_records WHERE tenant_id = ? AND day = ?",
            $filter
        )
    };
}

/// The aggregate statements of one dialect.
struct Statements {
    totals_by_user: &'static str,
    totals_by_model: &'static str,
    tenant_day: &'static str,
    user_day: &'static str,
}

macro_rules! statements {
    ($int:literal) => {
        Statements {
            totals_by_user: int_sql!(totals, "COALESCE(user_id, '')", $int),
            totals_by_model: int_sql!(totals, "model", $int),
            tenant_day: int_sql!(day, "", $int),
            user_day: int_sql!(day, " AND user_id = ?", $int),
        }
    };
}

/// Postgres and SQLite accept `BIGINT` as a cast target.
const BIGINT: Statements = statements!("BIGINT");
/// MySQL, MariaDB and TiDB only cast to `SIGNED` (a `BIGINT`).
const SIGNED: Statements = statements!("SIGNED");

impl Statements {
    fn of(dialect: Dialect) -> &'static Self {
        match dialect {
            Dialect::Sqlite | Dialect::Postgres => &BIGINT,
            Dialect::Mysql => &SIGNED,
        }
    }
}

impl<'s> UsageRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records one model call's tokens, stamped with the store's clock.
    pub async fn record(&self, tenant: &TenantId, usage: &NewUsage) -> Result<()> {
        let at_ms = self.store.clock_ms();
        self.store
            .dialect
            .query("INSERT INTO usage_records (tenant_id, record_id, at_ms, day, session_id, user_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(new_id())
            .bind(at_ms)
            .bind(utc_day(at_ms))
            .bind(usage.session_id.as_str().to_owned())
            .bind(usage.user_id.as_ref().map(|u| u.as_str().to_owned()))
            .bind(usage.model.clone())
            .bind(to_i64(usage.input))
            .bind(to_i64(usage.output))
            .bind(to_i64(usage.cache_read))
            .bind(to_i64(usage.cache_write))
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// The tenant's usage recorded in `[from_ms, to_ms)`, one total per user or per model,
    /// ordered by key (byte order).
    pub async fn totals(
        &self,
        tenant: &TenantId,
        from_ms: i64,
        to_ms: i64,
        group: UsageGroup,
    ) -> Result<Vec<UsageTotal>> {
        let statements = Statements::of(self.store.dialect);
        let sql = match group {
            UsageGroup::User => statements.totals_by_user,
            UsageGroup::Model => statements.totals_by_model,
        };
        let rows = self
            .store
            .dialect
            .query(sql)
            .bind(tenant.as_str().to_owned())
            .bind(from_ms)
            .bind(to_ms)
            .fetch_all(&self.store.pool)
            .await?;
        let mut totals = rows
            .iter()
            .map(total_from_row)
            .collect::<Result<Vec<_>>>()?;
        // Collations differ between databases; the order callers see does not.
        totals.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(totals)
    }

    /// All tokens (input, output, cache read and cache write) the tenant, or one of its users,
    /// spent on a UTC day (`YYYY-MM-DD`, as [`utc_day`] writes it).
    pub async fn tokens_on_day(
        &self,
        tenant: &TenantId,
        user: Option<&UserId>,
        day: &str,
    ) -> Result<u64> {
        let statements = Statements::of(self.store.dialect);
        let query = match user {
            None => self
                .store
                .dialect
                .query(statements.tenant_day)
                .bind(tenant.as_str().to_owned())
                .bind(day.to_owned()),
            Some(user) => self
                .store
                .dialect
                .query(statements.user_day)
                .bind(tenant.as_str().to_owned())
                .bind(day.to_owned())
                .bind(user.as_str().to_owned()),
        };
        let row = query.fetch_one(&self.store.pool).await?;
        count(&row, "tokens")
    }
}

const TABLE: &str = "usage_records";

fn total_from_row(row: &AnyRow) -> Result<UsageTotal> {
    Ok(UsageTotal {
        key: col(row, TABLE, "group_key")?,
        input: count(row, "input")?,
        output: count(row, "output")?,
        cache_read: count(row, "cache_read")?,
        cache_write: count(row, "cache_write")?,
        calls: count(row, "calls")?,
    })
}

/// A summed column, which is never negative unless a row is.
fn count(row: &AnyRow, name: &str) -> Result<u64> {
    let value: i64 = col(row, TABLE, name)?;
    u64::try_from(value)
        .map_err(|_| Error::corrupt(TABLE, format!("column {name}: negative sum {value}")))
}

/// The UTC date of a Unix-millisecond timestamp, as `YYYY-MM-DD` (`"2026-11-30"`).
pub fn utc_day(at_ms: i64) -> String {
    let days = at_ms.div_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), after Howard Hinnant's
/// `civil_from_days`: count in 400-year eras from 0000-03-01 so leap days fall at era ends.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], from March 1
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let month = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction.
    (year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_before_the_epoch_and_at_year_ends() {
        assert_eq!(utc_day(-1), "1969-12-31");
        assert_eq!(utc_day(86_400_000 - 1), "1970-01-01");
        assert_eq!(utc_day(951_782_400_000), "2000-02-29");
        assert_eq!(utc_day(1_767_225_599_999), "2025-12-31");
        assert_eq!(utc_day(1_767_225_600_000), "2026-01-01");
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_previous() {
        let month_len = |y: i64, m: u32| match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut previous = civil_from_days(-1);
        assert_eq!(previous, (1969, 12, 31));
        for days in 0..146_097 {
            let (y, m, d) = previous;
            let expected = if d < month_len(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            let next = civil_from_days(days);
            assert_eq!(next, expected, "day {days}");
            previous = next;
        }
        assert_eq!(previous, (2369, 12, 31));
    }
}
