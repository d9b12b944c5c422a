//! Multi-row `INSERT`s: many steps' rows of one table in one statement.
//!
//! Invariant: statements are built only from static table and column names; every value is a
//! bound parameter. A statement holds at most [`ROWS_PER_STATEMENT`] rows, far below every
//! backend's parameter limit (SQLite 32,766, MySQL and Postgres 65,535).

use sqlx::AssertSqlSafe;
use sqlx::any::AnyArguments;
use sqlx::query::Query;

use crate::{Dialect, Result};

/// The most rows one statement inserts.
const ROWS_PER_STATEMENT: usize = 200;

/// A bound value.
#[derive(Debug)]
pub(crate) enum Value {
    Text(String),
    OptText(Option<String>),
    Int(i64),
}

/// Rows for one table.
#[derive(Debug)]
pub(crate) struct Rows {
    table: &'static str,
    columns: &'static [&'static str],
    /// What a duplicate key does: `None` fails the statement; `Some(column)` keeps the old row.
    keep_existing: Option<&'static str>,
    values: Vec<Value>,
}

impl Rows {
    pub(crate) fn new(table: &'static str, columns: &'static [&'static str]) -> Self {
        Self {
            table,
            columns,
            keep_existing: None,
            values: Vec::new(),
        }
    }

    /// Rows whose duplicates keep the row already stored (`key_column`: any column of the table,
    /// which MySQL needs to express "do nothing").
    pub(crate) fn keeping_existing(mut self, key_column: &'static str) -> Self {
        self.keep_existing = Some(key_column);
        self
    }

    /// Adds one row; `row` must hold one value per column.
    pub(crate) fn push(&mut self, row: impl IntoIterator<Item = Value>) {
        let before = self.values.len();
        self.values.extend(row);
        debug_assert_eq!(self.values.len() - before, self.columns.len());
    }

    /// Inserts every row, in statements of at most [`ROWS_PER_STATEMENT`] rows.
    pub(crate) async fn insert(
        self,
        conn: &mut sqlx::AnyConnection,
        dialect: Dialect,
    ) -> Result<()> {
        let width = self.columns.len();
        let mut values = self.values.into_iter().peekable();
        while values.peek().is_some() {
            let chunk: Vec<Value> = values.by_ref().take(width * ROWS_PER_STATEMENT).collect();
            let sql = statement(
                dialect,
                (self.table, self.columns),
                chunk.len() / width,
                self.keep_existing,
            );
            let query = chunk
                .into_iter()
                .fold(sqlx::query(AssertSqlSafe(sql)), bind);
            query.execute(&mut *conn).await?;
        }
        Ok(())
    }
}

fn bind(
    query: Query<'static, sqlx::Any, AnyArguments>,
    value: Value,
) -> Query<'static, sqlx::Any, AnyArguments> {
    match value {
        Value::Text(text) => query.bind(text),
        Value::OptText(text) => query.bind(text),
        Value::Int(n) => query.bind(n),
    }
}

/// `INSERT INTO table (columns) VALUES (…), (…)` for `rows` rows, in the dialect's placeholders.
fn statement(
    dialect: Dialect,
    (table, columns): (&str, &[&str]),
    rows: usize,
    keep_existing: Option<&str>,
) -> String {
    let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
    let mut n = 0;
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for column in 0..columns.len() {
            if column > 0 {
                sql.push_str(", ");
            }
            n += 1;
            match dialect {
                Dialect::Postgres => {
                    sql.push('$');
                    sql.push_str(&n.to_string());
                }
                Dialect::Sqlite | Dialect::Mysql => sql.push('?'),
            }
        }
        sql.push(')');
    }
    match (keep_existing, dialect) {
        (None, _) => {}
        (Some(_), Dialect::Sqlite | Dialect::Postgres) => sql.push_str(" ON CONFLICT DO NOTHING"),
        (Some(key), Dialect::Mysql) => {
            sql.push_str(&format!(" ON DUPLICATE KEY UPDATE {key} = {key}"));
        }
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_number_postgres_placeholders_across_rows() {
        let sql = statement(Dialect::Postgres, ("t", &["a", "b"]), 2, None);
        assert_eq!(sql, "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)");
        let sql = statement(Dialect::Mysql, ("t", &["a"]), 2, Some("a"));
        assert_eq!(
            sql,
            "INSERT INTO t (a) VALUES (?), (?) ON DUPLICATE KEY UPDATE a = a"
        );
        let sql = statement(Dialect::Sqlite, ("t", &["a"]), 1, Some("a"));
        assert_eq!(sql, "INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING");
    }
}
