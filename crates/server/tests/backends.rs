//! The storage backends a black-box test runs `workmate serve` on: the embedded SQLite file, and
//! Postgres and MariaDB when their test servers are named in the environment.

use crate::support::fresh_database;

/// Where a server under test keeps its data.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
    Mariadb,
}

impl Backend {
    /// The database to run on: `Some(None)` for the SQLite file in the server's data directory,
    /// `Some(Some(url))` for a fresh clustered database, `None` (said on stderr) when that
    /// backend's test server is not configured.
    pub(crate) fn database(self) -> Option<Option<String>> {
        match self {
            Self::Sqlite => Some(None),
            Self::Postgres => fresh_database("WORKMATE_TEST_POSTGRES_URL").map(Some),
            Self::Mariadb => fresh_database("WORKMATE_TEST_MYSQL_URL").map(Some),
        }
    }

    /// The store URL a test opens beside the server, for a server whose data directory is `dir`.
    pub(crate) fn store_url(database: Option<&str>, dir: &std::path::Path) -> String {
        database.map_or_else(
            || format!("sqlite://{}/data/workmate.db", dir.display()),
            str::to_owned,
        )
    }
}

/// One `#[test]` per backend for each named scenario `fn scenario(backend: Backend)` in scope.
macro_rules! on_every_backend {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                use $crate::backends::Backend;

                #[test]
                fn sqlite() {
                    super::$scenario(Backend::Sqlite);
                }

                #[test]
                fn postgres() {
                    super::$scenario(Backend::Postgres);
                }

                #[test]
                fn mariadb() {
                    super::$scenario(Backend::Mariadb);
                }
            }
        )*
    };
}
pub(crate) use on_every_backend;
