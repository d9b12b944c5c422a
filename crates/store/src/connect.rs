//! Opening a pool on any of the three backends.

use std::sync::Arc;
use std::time::Duration;

use sqlx::AnyPool;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, Connection, Executor};

use crate::{Clock, Dialect, Error, Result, Store, SystemClock};

/// How to open the store.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// Most connections the pool keeps open.
    pub max_connections: u32,
    /// How long to wait for a connection before failing a call.
    pub acquire_timeout: Duration,
    /// The clock used for the store's own timestamps.
    pub clock: Arc<dyn Clock>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            max_connections: 10,
            acquire_timeout: Duration::from_secs(10),
            clock: Arc::new(SystemClock),
        }
    }
}

impl Store {
    /// Connects to the database a URL names. A SQLite file is created if it does not exist
    /// (its folder must exist). Does not migrate: call [`Store::migrate`].
    pub async fn connect(url: &str, options: ConnectOptions) -> Result<Self> {
        let dialect = Dialect::from_url(url)?;
        let url = normalized_url(dialect, url)?;
        sqlx::any::install_default_drivers();
        // One direct connection first: its error names the real cause (refused, unknown host,
        // bad password, no such database), where the pool would only report a timeout.
        let mut conn = AnyConnection::connect(&url).await?;
        if dialect == Dialect::Sqlite && !is_memory(&url) {
            // WAL lets readers run beside the one writer. Setting it needs the file to itself, so
            // it is done once here rather than on every pooled connection.
            conn.execute("PRAGMA journal_mode = WAL").await?;
        }
        conn.close().await?;
        let memory = is_memory(&url);
        // An in-memory database lives exactly as long as its one connection, which every caller
        // shares: it is opened once and never closed while the store lives.
        let connections = if memory { 1 } else { options.max_connections };
        let pool = open_pool(&url, dialect, connections, memory, options.acquire_timeout).await?;
        // SQLite has one write lock. Writers on separate connections that meet it sleep in
        // SQLite's busy handler (1, 2, 5, 10 ms, ...); queued on one connection of their own
        // they take turns at once, and readers keep the other connections.
        let writes = if dialect == Dialect::Sqlite && !memory {
            open_pool(&url, dialect, 1, false, options.acquire_timeout).await?
        } else {
            pool.clone()
        };
        Ok(Self {
            pool,
            writes,
            dialect,
            clock: options.clock,
            writer: Arc::default(),
            tenants: crate::tenant_cache::TenantCache::default(),
            catalog: crate::catalog_cache::CatalogCache::default(),
            identities: crate::identity_cache::IdentityCache::default(),
        })
    }
}

/// The SQLite page cache of one connection: 512 KiB (a negative `cache_size` is in KiB). Pages
/// past it are read again from the operating system's file cache, so little is lost; the bound
/// keeps the embedded store's resident memory small and flat as the database grows.
const SQLITE_PAGE_CACHE: &str = "PRAGMA cache_size = -512";

/// A pool of at most `connections` (an in-memory database keeps its one connection forever).
async fn open_pool(
    url: &str,
    dialect: Dialect,
    connections: u32,
    memory: bool,
    acquire_timeout: Duration,
) -> Result<AnyPool> {
    let (lifetime, idle) = if memory {
        (None, None)
    } else {
        (
            Some(Duration::from_secs(30 * 60)),
            Some(Duration::from_secs(10 * 60)),
        )
    };
    Ok(AnyPoolOptions::new()
        .max_connections(connections)
        .min_connections(u32::from(memory))
        .max_lifetime(lifetime)
        .idle_timeout(idle)
        .acquire_timeout(acquire_timeout)
        .after_connect(move |conn, _meta| {
            Box::pin(async move {
                if dialect == Dialect::Sqlite {
                    conn.execute("PRAGMA synchronous = NORMAL").await?;
                    conn.execute("PRAGMA busy_timeout = 30000").await?;
                    // Each connection's page cache, set rather than left to the build's default,
                    // so the pool's memory is bounded by (connections + 1) × this.
                    conn.execute(SQLITE_PAGE_CACHE).await?;
                }
                Ok(())
            })
        })
        .connect(url)
        .await?)
}

/// Checks the URL's shape and fills in what workmate always wants (SQLite: create the file).
/// The file a SQLite URL names (`sqlite://data/workmate.db`, `sqlite:x.db?mode=rwc`), with its
/// `%XX` escapes decoded; `None` for another database or an in-memory one.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    if url == MEMORY_URL || Dialect::from_url(url).ok()? != Dialect::Sqlite {
        return None;
    }
    let rest = url.split_once(':')?.1;
    let path = rest.trim_start_matches("//").split('?').next()?;
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| path.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded)
        .ok()
        .map(std::path::PathBuf::from)
}

fn normalized_url(dialect: Dialect, url: &str) -> Result<String> {
    if url == MEMORY_URL {
        return Ok(url.to_owned());
    }
    let parsed = url::Url::parse(url).map_err(|e| Error::InvalidUrl {
        reason: format!("{e}; expected e.g. {}", example(dialect)),
    })?;
    match dialect {
        Dialect::Sqlite => {
            let rest = url
                .split_once(':')
                .map(|(_, rest)| rest)
                .unwrap_or_default();
            let path = rest
                .trim_start_matches("//")
                .split('?')
                .next()
                .unwrap_or_default();
            if path.is_empty() {
                return Err(Error::InvalidUrl {
                    reason: format!("no database file named; expected e.g. {}", example(dialect)),
                });
            }
            if parsed.query_pairs().any(|(k, _)| k == "mode") {
                Ok(url.to_owned())
            } else if parsed.query().is_some() {
                Ok(format!("{url}&mode=rwc"))
            } else {
                Ok(format!("{url}?mode=rwc"))
            }
        }
        Dialect::Mysql | Dialect::Postgres => {
            if parsed.host_str().is_none_or(str::is_empty) {
                return Err(Error::InvalidUrl {
                    reason: format!("no host; expected e.g. {}", example(dialect)),
                });
            }
            if parsed.path().trim_start_matches('/').is_empty() {
                return Err(Error::InvalidUrl {
                    reason: format!("no database name; expected e.g. {}", example(dialect)),
                });
            }
            Ok(url.to_owned())
        }
    }
}

/// The URL of the in-memory store: for tests, benchmarks and demos; gone when the process ends.
pub(crate) const MEMORY_URL: &str = "sqlite::memory:";

fn is_memory(url: &str) -> bool {
    url == MEMORY_URL
}

fn example(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "sqlite://data/workmate.db",
        Dialect::Mysql => "mysql://user:password@db.internal:3306/workmate",
        Dialect::Postgres => "postgres://user:password@db.internal:5432/workmate",
    }
}

/// Checks a database URL without connecting: the same rules [`Store::connect`] applies.
pub fn validate_url(url: &str) -> Result<Dialect> {
    let dialect = Dialect::from_url(url)?;
    normalized_url(dialect, url)?;
    Ok(dialect)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_url_names_its_file() {
        let file = |url| sqlite_file(url).map(|p| p.display().to_string());
        assert_eq!(
            file("sqlite://data/workmate.db").as_deref(),
            Some("data/workmate.db")
        );
        assert_eq!(
            file("sqlite:///var/lib/w%3Fm%25.db?mode=rwc").as_deref(),
            Some("/var/lib/w?m%.db")
        );
        assert_eq!(file("sqlite::memory:"), None);
        assert_eq!(file("postgres://u@h/db"), None);
    }

    #[test]
    fn sqlite_urls_create_the_file() {
        assert_eq!(
            normalized_url(Dialect::Sqlite, "sqlite://data/w.db").unwrap(),
            "sqlite://data/w.db?mode=rwc"
        );
        assert_eq!(
            normalized_url(Dialect::Sqlite, "sqlite:w.db?mode=ro").unwrap(),
            "sqlite:w.db?mode=ro"
        );
    }

    #[test]
    fn memory_urls_name_the_in_memory_store() {
        assert_eq!(
            normalized_url(Dialect::Sqlite, "sqlite::memory:").unwrap(),
            MEMORY_URL
        );
    }

    #[test]
    fn malformed_urls_say_what_is_expected() {
        let err = validate_url("postgres://").unwrap_err().to_string();
        assert!(err.contains("expected e.g. postgres://"), "{err}");
        assert!(validate_url("mysql://db.internal").is_err());
        assert!(validate_url("sqlite:").is_err());
        assert!(validate_url("oracle://x/y").is_err());
    }
}
