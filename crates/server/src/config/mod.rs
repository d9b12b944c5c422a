//! workmate's configuration: defaults < `workmate.toml` < `WORKMATE__SECTION__KEY` environment
//! variables < command-line flags, resolved once.
//!
//! Invariant: a [`Config`] is built only by [`Config::load`], which validates every value, so
//! holding one means the configuration is usable; it is never changed afterwards. Relative paths
//! (`data_dir`, `workspaces_dir`, a relative SQLite URL) are relative to the process's working directory.
//!
//! `[log] level` also honours `RUST_LOG`, the ecosystem's convention, as a lower-precedence alias
//! of `WORKMATE__LOG__LEVEL` in the environment layer: `--log-level` beats
//! `WORKMATE__LOG__LEVEL`, which beats `RUST_LOG`, which beats the file. One resolved filter is
//! used; no other place reads `RUST_LOG`.

mod audit;
mod auth;
mod connectors;
mod coordinator;
mod dlp;
mod engine;
mod error;
mod keys;
mod layers;
mod network;
mod platforms;
mod providers;
mod render;
mod secret;
mod server;
mod tools;
mod tracing;
mod validate;
mod vault;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use audit::{AuditConfig, NatsSinkConfig, RedisSinkConfig};
pub use auth::{AuthConfig, OidcConfig};
pub use connectors::{ConnectorsConfig, OAuthClientConfig};
pub use coordinator::CoordinatorConfig;
pub use dlp::DlpConfig;
pub use engine::{EngineSettings, SchedulerSettings};
pub use error::ConfigError;
pub use keys::Source;
pub use network::{McpConfig, NetworkConfig, PersonasConfig};
pub use platforms::{
    DEFAULT_ANSWER_TEMPLATE_ID, DEFAULT_CALLBACK_ROUTE_KEY, DingTalkConfig, DingTalkMode,
    FeishuConfig, FeishuMode, PlatformsConfig, SlackConfig, SlackMode, WeComConfig, WeComMode,
};
pub use providers::{GatewayProvider, ProvidersConfig};
pub use secret::DatabaseUrl;
pub use server::{HttpLimits, SurfaceGrants, SurfaceToken};
pub use tools::{ShellSandboxMode, ToolsSettings};
pub use tracing::TracingConfig;
pub use vault::{VAULT_KEY_ENV, VAULT_PREVIOUS_KEYS_ENV, VaultSettings};

/// `url` with its credentials (user info, `password=`-like parameters) as `***`, for messages.
pub fn redacted_url(url: &str) -> String {
    secret::redact_credentials(url)
}

/// The name of the configuration file looked for in the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "workmate.toml";

/// The resolved, validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// `[server]`.
    pub server: ServerConfig,
    /// `[database]`.
    pub database: DatabaseConfig,
    /// `[log]`.
    pub log: LogConfig,
    /// `[engine]`.
    pub engine: EngineSettings,
    /// `[scheduler]`.
    pub scheduler: SchedulerSettings,
    /// `[providers.*]`.
    pub providers: ProvidersConfig,
    /// `[platforms.*]`: the chat platforms workmate answers on.
    pub platforms: PlatformsConfig,
    /// `[tools]`: session workspaces and the exec sandbox.
    pub tools: ToolsSettings,
    /// `[vault]`: the credential vault's master keys.
    pub vault: VaultSettings,
    /// `[audit]`: the sinks the audit trail is streamed to.
    pub audit: AuditConfig,
    /// `[dlp]`: the operator's own redaction rules.
    pub dlp: DlpConfig,
    /// `[connectors]`: the connect pages' public origin and the connectors' OAuth clients.
    pub connectors: ConnectorsConfig,
    /// `[tracing]`: where spans are exported.
    pub tracing: TracingConfig,
    /// `[auth]`: single sign-on and the break-glass admin token.
    pub auth: AuthConfig,
    /// `[coordinator]`: what replicas share besides the database, and their lease terms.
    pub coordinator: CoordinatorConfig,
    /// `[network]`: the private hosts and ranges the guarded egress may reach.
    pub network: NetworkConfig,
    /// `[mcp]`: the host folders MCP servers may be given.
    pub mcp: McpConfig,
    /// `[personas]`: the host folders personas may be installed from.
    pub personas: PersonasConfig,
    /// The folder of the configuration file, when one was read (no MCP server may see it).
    pub config_dir: Option<PathBuf>,
    origins: BTreeMap<(String, String), Source>,
}

/// `[server]`: the HTTP listener and local state.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// `listen`: the address to accept HTTP on (default `127.0.0.1:8080`).
    pub listen: SocketAddr,
    /// `data_dir`: where workmate keeps local state (default `./data`).
    pub data_dir: PathBuf,
    /// `shutdown_grace_ms`: how long the drain after a stop signal may take (default 30000):
    /// in-flight requests and running turns get this long to finish; turns still running then
    /// are left for another replica (or the next start) to take up.
    pub shutdown_grace: Duration,
    /// `admin_token`: the bearer token of the HTTP API; generated into the data directory at
    /// first start when unset.
    pub admin_token: Option<secrecy::SecretString>,
    /// `replica_id`: this process's name as the holder of session leases (default
    /// `<hostname>:<listen port>`). Unique among the processes sharing a database, and the same
    /// across restarts of one (e.g. the pod name), so a restarted process takes its sessions
    /// back at once.
    pub replica_id: String,
    /// `[server.surface_tokens]`: one token per trusted surface; only these may name the user
    /// they act for (`X-Workmate-Acting-User`).
    pub surface_tokens: Vec<SurfaceToken>,
    /// `request_timeout_ms`, `header_read_timeout_ms`, `max_body_bytes`, `max_connections`.
    pub limits: HttpLimits,
}

/// `[database]`.
#[derive(Clone, Debug)]
pub struct DatabaseConfig {
    /// `url`: default `sqlite://<data_dir>/workmate.db`.
    pub url: DatabaseUrl,
    /// `max_connections`: the pool's size (default 10).
    pub max_connections: u32,
}

/// `[log]`.
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// `format`: `text` (default) or `json` lines, on stderr.
    pub format: LogFormat,
    /// `level`: a `tracing` filter directive such as `info` or `info,sqlx=warn` (default `info`).
    pub level: String,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// The name used in the file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
        }
    }
}

/// Values given as command-line flags, the highest-precedence layer.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--listen`.
    pub listen: Option<String>,
    /// `--data-dir`.
    pub data_dir: Option<String>,
    /// `--database-url`.
    pub database_url: Option<String>,
    /// `--log-format`.
    pub log_format: Option<LogFormat>,
    /// `--log-level`.
    pub log_level: Option<String>,
}

/// Everything the configuration is resolved from. Tests build this in code.
#[derive(Clone, Debug, Default)]
pub struct ConfigSources {
    /// `--config FILE`: must exist. Without it, `workmate.toml` in `working_dir` is read if present.
    pub config_file: Option<PathBuf>,
    /// Where to look for `workmate.toml`.
    pub working_dir: PathBuf,
    /// The environment, as name/value pairs; only `WORKMATE__…`, `RUST_LOG`, the variables
    /// `api_key_env` names and the vault's `WORKMATE_VAULT_KEY`/`WORKMATE_VAULT_PREVIOUS_KEYS`
    /// are read.
    pub env: Vec<(String, String)>,
    /// Command-line flags.
    pub flags: Overrides,
}

impl Config {
    /// Resolves and validates the configuration from its sources.
    pub fn load(sources: &ConfigSources) -> Result<Self, ConfigError> {
        let file = match &sources.config_file {
            Some(path) if !path.is_file() => {
                return Err(ConfigError::FileMissing { path: path.clone() });
            }
            Some(path) => Some(path.clone()),
            None => Some(sources.working_dir.join(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()),
        };
        let file_layer = match &file {
            Some(path) => layers::file_entries(path)?,
            None => Vec::new(),
        };
        let env_layer = layers::env_entries(sources.env.iter().cloned())?;
        let flag_layer = layers::flag_entries(&sources.flags);
        let mut config = validate::validate(
            layers::merge([file_layer, env_layer, flag_layer]),
            &sources.env,
        )?;
        config.config_dir = file
            .as_deref()
            .and_then(|f| std::path::absolute(f).ok())
            .and_then(|f| f.parent().map(std::path::Path::to_path_buf));
        Ok(config)
    }

    /// Where the value of `[section] key` came from.
    pub fn origin(&self, section: &str, key: &str) -> Source {
        self.origins
            .get(&(section.to_owned(), key.to_owned()))
            .cloned()
            .unwrap_or(Source::Default)
    }

    /// The configuration as TOML, with every secret (tokens, keys, provider headers, passwords in
    /// URLs) replaced by `***`.
    pub fn to_redacted_toml(&self) -> String {
        render::redacted_toml(self)
    }
}
