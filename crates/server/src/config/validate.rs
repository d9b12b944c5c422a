//! From merged layers to a validated [`Config`].
//!
//! Invariant: a [`Config`] exists only if every value in it has been checked (addresses parse,
//! the database URL has a usable shape, the log filter compiles, numbers are in range), and every
//! rejection names the key, where its value came from and how to set it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing_subscriber::EnvFilter;

use super::keys;
use super::layers::Merged;
use super::{Config, ConfigError, DatabaseConfig, DatabaseUrl, LogConfig, LogFormat, ServerConfig};

pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub(crate) const DEFAULT_DATA_DIR: &str = "./data";
pub(crate) const DEFAULT_MAX_CONNECTIONS: i64 = 10;
pub(crate) const DEFAULT_LOG_LEVEL: &str = "info";
pub(crate) const DEFAULT_SHUTDOWN_GRACE_MS: i64 = 30_000;
/// The SQLite file's name inside the data directory.
pub(crate) const DEFAULT_DATABASE_FILE: &str = "workmate.db";

/// The merged layers, before validation. Every field is optional: unset means "use the default".
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    #[serde(default)]
    pub(crate) server: RawServer,
    #[serde(default)]
    pub(crate) database: RawDatabase,
    #[serde(default)]
    pub(crate) log: RawLog,
    #[serde(default)]
    pub(crate) engine: RawEngine,
    #[serde(default)]
    pub(crate) scheduler: RawScheduler,
    #[serde(default)]
    pub(crate) providers: BTreeMap<String, RawProvider>,
    #[serde(default)]
    pub(crate) platforms: super::platforms::RawPlatforms,
    #[serde(default)]
    pub(crate) tools: super::tools::RawTools,
    #[serde(default)]
    pub(crate) vault: super::vault::RawVault,
    #[serde(default, skip_serializing_if = "super::auth::RawAuth::is_empty")]
    pub(crate) auth: super::auth::RawAuth,
    #[serde(default, skip_serializing_if = "super::audit::RawAudit::is_empty")]
    pub(crate) audit: super::audit::RawAudit,
    #[serde(default, skip_serializing_if = "super::dlp::RawDlp::is_empty")]
    pub(crate) dlp: super::dlp::RawDlp,
    #[serde(
        default,
        skip_serializing_if = "super::connectors::RawConnectors::is_empty"
    )]
    pub(crate) connectors: super::connectors::RawConnectors,
    #[serde(default, skip_serializing_if = "super::tracing::RawTracing::is_empty")]
    pub(crate) tracing: super::tracing::RawTracing,
    #[serde(
        default,
        skip_serializing_if = "super::coordinator::RawCoordinator::is_empty"
    )]
    pub(crate) coordinator: super::coordinator::RawCoordinator,
    #[serde(default, skip_serializing_if = "super::network::RawNetwork::is_empty")]
    pub(crate) network: super::network::RawNetwork,
    #[serde(default, skip_serializing_if = "super::network::RawMcp::is_empty")]
    pub(crate) mcp: super::network::RawMcp,
    #[serde(default, skip_serializing_if = "super::network::RawPersonas::is_empty")]
    pub(crate) personas: super::network::RawPersonas,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEngine {
    pub(crate) max_iterations: Option<i64>,
    pub(crate) default_model: Option<String>,
    pub(crate) recover_within_seconds: Option<i64>,
    pub(crate) idle_session_seconds: Option<i64>,
}

/// `[scheduler]`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScheduler {
    pub(crate) tick_seconds: Option<i64>,
}

/// `[providers.NAME]`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProvider {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) api_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timeout_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) models: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vision_models: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pdf_models: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context_window: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) script: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) headers: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub(crate) listen: Option<String>,
    pub(crate) data_dir: Option<String>,
    pub(crate) shutdown_grace_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) admin_token: Option<String>,
    pub(crate) replica_id: Option<String>,
    pub(crate) request_timeout_ms: Option<i64>,
    pub(crate) header_read_timeout_ms: Option<i64>,
    pub(crate) max_body_bytes: Option<i64>,
    pub(crate) max_connections: Option<i64>,
    pub(crate) max_connections_per_client: Option<i64>,
    pub(crate) idle_timeout_ms: Option<i64>,
    pub(crate) max_streams_per_client: Option<i64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) surface_tokens: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) surface_grants: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDatabase {
    pub(crate) url: Option<String>,
    pub(crate) max_connections: Option<i64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLog {
    pub(crate) format: Option<String>,
    pub(crate) level: Option<String>,
}

/// Checks the merged layers and builds the configuration.
pub(crate) fn validate(merged: Merged, env: &[(String, String)]) -> Result<Config, ConfigError> {
    let invalid =
        |section: &'static str, key: &'static str, problem: String| ConfigError::Invalid {
            section,
            key,
            origin: merged.origin(section, key),
            problem,
            how: keys::how_to_set(section, key),
        };
    // The layers only hold known keys of the right type, so this fails only if the key list and
    // these structs disagree (a unit test keeps them in step).
    let raw: RawConfig = merged
        .table
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Schema {
            message: e.message().to_owned(),
        })?;
    let admin_token =
        super::engine::validate_admin_token(raw.server.admin_token.clone(), &invalid)?;
    let limits = super::server::validate_limits(&raw.server, &invalid)?;
    let surface_tokens = super::server::validate_surface_tokens(
        &raw.server.surface_tokens,
        &raw.server.surface_grants,
        admin_token.as_ref(),
        |name| merged.origin("server.surface_tokens", name),
    )?;

    let listen_text = raw
        .server
        .listen
        .unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
    let listen: SocketAddr = listen_text.parse().map_err(|_| {
        invalid(
            "server",
            "listen",
            format!(
                "`{listen_text}` is not an IP:PORT address such as 127.0.0.1:8080 or 0.0.0.0:8080"
            ),
        )
    })?;

    let data_dir = raw
        .server
        .data_dir
        .unwrap_or_else(|| DEFAULT_DATA_DIR.to_owned());
    if data_dir.trim().is_empty() {
        return Err(invalid(
            "server",
            "data_dir",
            "the data directory is empty".into(),
        ));
    }

    let grace = raw
        .server
        .shutdown_grace_ms
        .unwrap_or(DEFAULT_SHUTDOWN_GRACE_MS);
    let grace = u64::try_from(grace)
        .ok()
        .filter(|ms| *ms <= 600_000)
        .ok_or_else(|| {
            invalid(
                "server",
                "shutdown_grace_ms",
                format!("{grace} is not between 0 and 600000"),
            )
        })?;

    let url = raw
        .database
        .url
        .unwrap_or_else(|| default_database_url(&data_dir));
    workmate_store::validate_url(&url).map_err(|e| invalid("database", "url", e.to_string()))?;

    let max = raw
        .database
        .max_connections
        .unwrap_or(DEFAULT_MAX_CONNECTIONS);
    let max_connections = u32::try_from(max)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| {
            invalid(
                "database",
                "max_connections",
                format!("{max} is not between 1 and 10000"),
            )
        })?;

    let format = match raw.log.format.as_deref() {
        None | Some("text") => LogFormat::Text,
        Some("json") => LogFormat::Json,
        Some(other) => {
            return Err(invalid(
                "log",
                "format",
                format!("`{other}` is neither \"text\" nor \"json\""),
            ));
        }
    };
    let level = raw
        .log
        .level
        .unwrap_or_else(|| DEFAULT_LOG_LEVEL.to_owned());
    EnvFilter::try_new(&level).map_err(|e| {
        invalid(
            "log",
            "level",
            format!(
                "`{level}` is not a tracing filter such as \"info\" or \"info,sqlx=warn\" ({e})"
            ),
        )
    })?;

    let engine = super::engine::validate_engine(&raw.engine, &invalid)?;
    let scheduler = super::engine::validate_scheduler(&raw.scheduler, &invalid)?;
    let providers = super::providers::validate_providers(&raw.providers, env, |name, key| {
        merged.origin(&format!("providers.{name}"), key)
    })?;
    let platforms = super::platforms::validate_platforms(&raw.platforms, &invalid)?;
    let tools =
        super::tools::validate_tools(&raw.tools, std::path::Path::new(&data_dir), &invalid)?;
    let vault = super::vault::validate_vault(&raw.vault, env, &invalid)?;
    let auth = super::auth::validate_auth(&raw.auth, &invalid)?;
    let audit = super::audit::validate_audit(&raw.audit, &invalid)?;
    let dlp = super::dlp::validate_dlp(&raw.dlp, &invalid)?;
    let connectors = super::connectors::validate_connectors(&raw.connectors, &invalid)?;
    let tracing = super::tracing::validate_tracing(&raw.tracing, &invalid)?;
    let coordinator = super::coordinator::validate_coordinator(&raw.coordinator, &invalid)?;
    let network = super::network::validate_network(&raw.network, &invalid)?;
    let mcp = super::network::validate_mcp(&raw.mcp, &invalid)?;
    let personas = super::network::validate_personas(&raw.personas, &invalid)?;

    Ok(Config {
        server: ServerConfig {
            listen,
            data_dir: PathBuf::from(data_dir),
            shutdown_grace: Duration::from_millis(grace),
            admin_token,
            surface_tokens,
            limits,
            replica_id: super::server::validate_replica_id(
                raw.server.replica_id,
                listen,
                &invalid,
            )?,
        },
        engine,
        scheduler,
        providers,
        platforms,
        tools,
        vault,
        auth,
        audit,
        dlp,
        connectors,
        tracing,
        coordinator,
        network,
        mcp,
        personas,
        config_dir: None,
        database: DatabaseConfig {
            url: DatabaseUrl::new(url),
            max_connections,
        },
        log: LogConfig { format, level },
        origins: merged.origins,
    })
}

/// `sqlite://<data_dir>/workmate.db`, escaping the characters a SQLite URL would misread.
fn default_database_url(data_dir: &str) -> String {
    let dir = data_dir.trim_end_matches('/');
    let dir = if dir.is_empty() { "/" } else { dir };
    let path = format!("{dir}/{DEFAULT_DATABASE_FILE}").replace("//", "/");
    let escaped = path
        .replace('%', "%25")
        .replace('?', "%3F")
        .replace('#', "%23");
    format!("sqlite://{escaped}")
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
