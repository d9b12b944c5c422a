//! Opening and migrating the store for a command.
//!
//! Invariant: the database URL reaches the store only here, and every failure is reported with the
//! URL's password redacted.

use workmate_store::{ConnectOptions, MigrationReport, Store};

use crate::config::Config;
use crate::error::StartupError;

/// Connects to the configured database (creating a SQLite file if needed).
pub async fn open(config: &Config) -> Result<Store, StartupError> {
    let options = ConnectOptions {
        max_connections: config.database.max_connections,
        ..ConnectOptions::default()
    };
    Store::connect(config.database.url.expose(), options)
        .await
        .map_err(|source| StartupError::Database {
            url: config.database.url.redacted(),
            source,
        })
}

/// Brings the schema up to date; closes the store if that fails.
pub async fn migrate(store: &Store, config: &Config) -> Result<MigrationReport, StartupError> {
    match store.migrate().await {
        Ok(report) => Ok(report),
        Err(source) => {
            store.close().await;
            Err(StartupError::Migrate {
                url: config.database.url.redacted(),
                source,
            })
        }
    }
}
