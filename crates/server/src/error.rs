//! Why the process could not start or run, and the exit code each reason ends with.
//!
//! Invariant: configuration-class problems (bad key or value, port in use, unusable data directory)
//! exit with 2 and runtime failures (database unreachable, server error) with 1; every message is
//! one line that says what to do and never contains a database password.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::ConfigError;

/// A failure of a `workmate` command.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The listen address cannot be bound.
    #[error(
        "cannot listen on {addr}: {reason}; stop the other process or set \
         [server] listen / --listen / WORKMATE__SERVER__LISTEN"
    )]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why, in words.
        reason: String,
    },
    /// The data directory cannot be used.
    #[error(
        "data directory {} is not usable: {reason}; set [server] data_dir / --data-dir / \
         WORKMATE__SERVER__DATA_DIR to a writable directory",
        path.display()
    )]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The database could not be opened.
    #[error(
        "cannot connect to the database {url}: {source}; check that it is running and reachable, \
         or set [database] url / --database-url / WORKMATE__DATABASE__URL"
    )]
    Database {
        /// The URL, password redacted.
        url: String,
        /// The store's error.
        source: workmate_store::Error,
    },
    /// The coordinator's Redis could not be reached.
    #[error(
        "cannot reach the coordinator's Redis {url}: {source}; check that it is running and \
         reachable, or unset [coordinator] redis_url / WORKMATE__COORDINATOR__REDIS_URL to run \
         without one"
    )]
    Coordinator {
        /// The URL, password redacted.
        url: String,
        /// The coordinator's error.
        source: workmate_coordinator::Error,
    },
    /// The schema could not be brought up to date.
    #[error("cannot migrate the database {url}: {source}")]
    Migrate {
        /// The URL, password redacted.
        url: String,
        /// The store's error.
        source: workmate_store::Error,
    },
    /// The command line's values cannot be used; the text says which and why.
    #[error("{0}")]
    Usage(String),
    /// `workmate models check` found models that do not answer; the report lists them.
    #[error("some models did not answer:\n{0}")]
    ModelsFailed(String),
    /// `workmate doctor` found a problem; the report says which.
    #[error("workmate doctor found problems:\n{0}")]
    DoctorFailed(String),
    /// `workmate audit verify` found a broken chain; the report says where.
    #[error("the audit trail is broken:\n{0}")]
    AuditBroken(String),
    /// The scripted provider's script cannot be used.
    #[error(
        "{0}; fix the file or set [providers.scripted] script / WORKMATE__PROVIDERS__SCRIPTED__SCRIPT"
    )]
    Script(String),
    /// The admin token could not be read or written.
    #[error(
        "cannot prepare the admin token in the data directory: {0}; check its permissions or set [server] admin_token"
    )]
    Token(std::io::Error),
    /// Sessions with unanswered tool calls could not be resumed.
    #[error("cannot resume interrupted sessions: {0}")]
    Resume(String),
    /// Logging could not be set up.
    #[error("cannot set up logging: {0}")]
    Telemetry(String),
    /// The async runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The HTTP server failed while running.
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
    /// A benchmark could not run to its end.
    #[error("the benchmark failed: {0}")]
    Bench(String),
    /// The command was understood but refused (e.g. demoting a tenant's last admin); nothing
    /// changed, and the text says why and what to do instead.
    #[error("{0}")]
    Refused(String),
    /// The credential vault's master keys cannot be used (a key file unreadable, open to
    /// others or malformed), or none is configured.
    #[error("the vault's master keys cannot be used: {0}")]
    VaultKeys(String),
    /// A database statement failed after the database was opened.
    #[error("the database failed: {0}")]
    Store(workmate_store::Error),
    /// A backup could not be taken or restored; nothing was left half-written.
    #[error("{0}")]
    Backup(String),
}

impl StartupError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Config(_)
            | Self::Listen { .. }
            | Self::DataDir { .. }
            | Self::Script(_)
            | Self::VaultKeys(_)
            | Self::Usage(_) => 2,
            Self::Database { .. }
            | Self::Coordinator { .. }
            | Self::Migrate { .. }
            | Self::Token(_)
            | Self::ModelsFailed(_)
            | Self::DoctorFailed(_)
            | Self::AuditBroken(_)
            | Self::Resume(_)
            | Self::Telemetry(_)
            | Self::Runtime(_)
            | Self::Serve(_)
            | Self::Bench(_)
            | Self::Refused(_)
            | Self::Store(_)
            | Self::Backup(_) => 1,
        }
    }

    /// The message as exactly one line, for the `error: …` line on stderr.
    pub fn one_line(&self) -> String {
        self.to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}
