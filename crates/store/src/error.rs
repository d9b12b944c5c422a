//! The store's error type.

/// What can go wrong talking to the database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database URL cannot be used.
    #[error("invalid database URL: {reason}")]
    InvalidUrl {
        /// What is wrong with it, and what would be accepted.
        reason: String,
    },
    /// The database refused or failed a statement, or could not be reached.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// The schema in the database does not match this build's migrations.
    #[error("migration {version} ({name}): {reason}")]
    Migration {
        /// The migration's number.
        version: i64,
        /// The migration's file name.
        name: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// A stored value could not be decoded: the row was written by something else or is damaged.
    #[error("corrupt row in {table}: {detail}")]
    Corrupt {
        /// The table holding the row.
        table: &'static str,
        /// What failed to decode.
        detail: String,
    },
    /// A row the operation needs does not exist for this tenant.
    #[error("{what} not found")]
    NotFound {
        /// What was looked for, e.g. "session s_123".
        what: String,
    },
    /// A secret could not be sealed, opened or re-wrapped (the vault's reason; never its value).
    #[error("secret {what}: {source}")]
    Secret {
        /// Which secret, e.g. "connector/github/token of tenant t1".
        what: String,
        /// The vault's error.
        source: workmate_vault::Error,
    },
    /// The caller asked for something the store never does.
    #[error("invalid request: {0}")]
    Invalid(String),
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn corrupt(table: &'static str, detail: impl std::fmt::Display) -> Self {
        Self::Corrupt {
            table,
            detail: detail.to_string(),
        }
    }
}
