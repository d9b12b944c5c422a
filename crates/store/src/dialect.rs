//! The few places where SQLite, MySQL/TiDB and Postgres disagree, kept in one spot.
//!
//! Repository code writes every statement once, with `?` placeholders; [`Dialect::query`] turns it
//! into the backend's form. Everything else (column types, ids made in the app) is chosen so that
//! one statement text works everywhere. `RETURNING` is used only where it saves a hot path a
//! round trip, on the backends that have it ([`Dialect::has_returning`]), beside a plain form that
//! serves MySQL.

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AssertSqlSafe};

use crate::{Error, Result};

/// Which database a URL selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// An embedded SQLite file (the default).
    Sqlite,
    /// MySQL, MariaDB or TiDB.
    Mysql,
    /// PostgreSQL.
    Postgres,
}

impl Dialect {
    /// Picks the dialect from a database URL's scheme.
    pub fn from_url(url: &str) -> Result<Self> {
        let Some((scheme, _)) = url.split_once(':') else {
            return Err(Error::InvalidUrl {
                reason: "no scheme; start it with sqlite:, mysql: or postgres:".into(),
            });
        };
        match scheme {
            "sqlite" => Ok(Self::Sqlite),
            "mysql" | "mariadb" => Ok(Self::Mysql),
            "postgres" | "postgresql" => Ok(Self::Postgres),
            _ => Err(Error::InvalidUrl {
                reason: format!(
                    "unsupported scheme {scheme:?}; use a sqlite:, mysql: or postgres: URL"
                ),
            }),
        }
    }

    /// The dialect's name, as used for its migrations folder.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Mysql => "mysql",
            Self::Postgres => "postgres",
        }
    }

    /// Whether `UPDATE … RETURNING` works (SQLite and Postgres; not MySQL, MariaDB or TiDB).
    /// On SQLite, read such a statement with `fetch_all`: SQLite commits its implicit transaction
    /// only once the statement has run to its end.
    pub(crate) fn has_returning(self) -> bool {
        match self {
            Self::Sqlite | Self::Postgres => true,
            Self::Mysql => false,
        }
    }

    /// A query from a statement written with `?` placeholders.
    pub(crate) fn query(self, template: &'static str) -> Query<'static, Any, AnyArguments> {
        match self {
            Self::Sqlite | Self::Mysql => sqlx::query(template),
            // The rewritten text comes only from static templates, never from input.
            Self::Postgres => sqlx::query(AssertSqlSafe(numbered_placeholders(template))),
        }
    }

    /// A `SELECT` that locks the rows it reads until the transaction ends (`FOR UPDATE` on
    /// MySQL and Postgres). SQLite has no row locks: there the transaction must come from
    /// `Store::begin_write`, whose `BEGIN IMMEDIATE` already holds the database's write lock.
    pub(crate) fn locking_query(self, template: &'static str) -> Query<'static, Any, AnyArguments> {
        let sql = match self {
            Self::Sqlite => template.to_owned(),
            Self::Mysql => format!("{template} FOR UPDATE"),
            Self::Postgres => numbered_placeholders(&format!("{template} FOR UPDATE")),
        };
        // Built only from static templates.
        sqlx::query(AssertSqlSafe(sql))
    }

    /// `INSERT` that silently keeps the existing row when a unique key already holds one.
    ///
    /// `template` must start with `INSERT INTO`; `key_column` is any column of the table (MySQL
    /// needs an assignment to express "do nothing").
    pub(crate) fn insert_ignoring_duplicates(
        self,
        template: &'static str,
        key_column: &'static str,
    ) -> Query<'static, Any, AnyArguments> {
        let sql = match self {
            Self::Sqlite | Self::Postgres => format!("{template} ON CONFLICT DO NOTHING"),
            Self::Mysql => {
                format!("{template} ON DUPLICATE KEY UPDATE {key_column} = {key_column}")
            }
        };
        let sql = match self {
            Self::Postgres => numbered_placeholders(&sql),
            Self::Sqlite | Self::Mysql => sql,
        };
        // Built only from static templates and static column names.
        sqlx::query(AssertSqlSafe(sql))
    }
}

/// Rewrites `?` placeholders as Postgres's `$1, $2, …`.
pub(crate) fn numbered_placeholders(template: &str) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut n = 0;
    for ch in template.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_placeholders_are_numbered_in_order() {
        assert_eq!(
            numbered_placeholders("SELECT a FROM t WHERE x = ? AND y = ?"),
            "SELECT a FROM t WHERE x = $1 AND y = $2"
        );
    }

    #[test]
    fn scheme_selects_dialect() {
        assert_eq!(
            Dialect::from_url("sqlite:data/w.db").unwrap(),
            Dialect::Sqlite
        );
        assert_eq!(
            Dialect::from_url("mysql://root@h/db").unwrap(),
            Dialect::Mysql
        );
        assert_eq!(
            Dialect::from_url("postgresql://h/db").unwrap(),
            Dialect::Postgres
        );
        assert!(Dialect::from_url("redis://h").is_err());
        assert!(Dialect::from_url("no-scheme").is_err());
    }
}
