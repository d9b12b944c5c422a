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
    /// The database to run on: `None` for the SQLite file in the server's data directory,
    /// `Some(url)` for a fresh clustered database (the Postgres and MariaDB tests are ignored
    /// when their test server was not named at build time).
    pub(crate) fn database(self) -> Option<String> {
        match self {
            Self::Sqlite => None,
            Self::Postgres => Some(fresh_database("WORKMATE_TEST_POSTGRES_URL")),
            Self::Mariadb => Some(fresh_database("WORKMATE_TEST_MYSQL_URL")),
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

                workmate_test_support::needs! { [postgres]
                    #[test]
                    fn postgres() {
                        super::$scenario(Backend::Postgres);
                    }
                }

                workmate_test_support::needs! { [mysql]
                    #[test]
                    fn mariadb() {
                        super::$scenario(Backend::Mariadb);
                    }
                }
            }
        )*
    };
}
pub(crate) use on_every_backend;
