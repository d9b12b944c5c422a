//! Decoding helpers shared by the repositories.

use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::{Error, Result};

/// Reads a column, naming the table when the row does not have the expected shape.
pub(crate) fn col<T>(row: &AnyRow, table: &'static str, name: &str) -> Result<T>
where
    T: for<'r> sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any>,
{
    row.try_get(name)
        .map_err(|e| Error::corrupt(table, format!("column {name}: {e}")))
}

/// Reads a JSON text column into a value.
pub(crate) fn json_col<T: DeserializeOwned>(
    row: &AnyRow,
    table: &'static str,
    name: &str,
) -> Result<T> {
    let text: String = col(row, table, name)?;
    serde_json::from_str(&text).map_err(|e| Error::corrupt(table, format!("column {name}: {e}")))
}

/// Reads a nullable JSON text column.
pub(crate) fn opt_json_col<T: DeserializeOwned>(
    row: &AnyRow,
    table: &'static str,
    name: &str,
) -> Result<Option<T>> {
    let text: Option<String> = col(row, table, name)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| Error::corrupt(table, format!("column {name}: {e}")))
    })
    .transpose()
}

/// Reads a text column holding one of a closed set of words.
pub(crate) fn enum_col<T: DeserializeOwned>(
    row: &AnyRow,
    table: &'static str,
    name: &str,
) -> Result<T> {
    let text: String = col(row, table, name)?;
    from_word(&text).map_err(|e| Error::corrupt(table, format!("column {name}: {e}")))
}

/// A value as JSON text for storage.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::Invalid(format!("cannot encode as JSON: {e}")))
}

/// A unit enum variant as its serde word (`"pending"`), for text columns.
pub(crate) fn to_word<T: Serialize>(value: &T) -> Result<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(word)) => Ok(word),
        Ok(other) => Err(Error::Invalid(format!("{other} is not a single word"))),
        Err(e) => Err(Error::Invalid(e.to_string())),
    }
}

fn from_word<T: DeserializeOwned>(word: &str) -> serde_json::Result<T> {
    serde_json::from_value(serde_json::Value::String(word.to_owned()))
}

/// Counts and limits are `u64` in the API and `BIGINT` in every database.
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A fresh time-sortable id for rows whose ids have no type of their own.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Reads a nullable text column holding one of a closed set of words.
pub(crate) fn opt_enum_col<T: DeserializeOwned>(
    row: &AnyRow,
    table: &'static str,
    name: &str,
) -> Result<Option<T>> {
    let text: Option<String> = col(row, table, name)?;
    text.map(|t| from_word(&t).map_err(|e| Error::corrupt(table, format!("column {name}: {e}"))))
        .transpose()
}
