//! The resolved configuration rendered back as TOML, for `workmate config`.
//!
//! Invariant: the output is a valid `workmate.toml` (same schema as the input, sections in the
//! documented order) that reproduces the configuration, except that every secret is `***`: the
//! admin and surface tokens, platform secrets, provider keys, every provider header value (they
//! carry credentials more often than not), and credentials inside URLs (user info, `password=`,
//! `key=`, `token=` and the like in the database URL and in provider base URLs).

use std::time::Duration;

use super::Config;
use super::secret::redact_credentials;
use super::validate::{
    RawConfig, RawDatabase, RawEngine, RawLog, RawProvider, RawScheduler, RawServer,
};

pub(crate) fn redacted_toml(config: &Config) -> String {
    let raw = RawConfig {
        server: RawServer {
            listen: Some(config.server.listen.to_string()),
            data_dir: Some(config.server.data_dir.display().to_string()),
            shutdown_grace_ms: Some(
                i64::try_from(config.server.shutdown_grace.as_millis()).unwrap_or(i64::MAX),
            ),
            admin_token: config.server.admin_token.as_ref().map(|_| "***".to_owned()),
            replica_id: Some(config.server.replica_id.clone()),
            request_timeout_ms: Some(millis(config.server.limits.request_timeout)),
            header_read_timeout_ms: Some(millis(config.server.limits.header_read_timeout)),
            max_body_bytes: Some(
                i64::try_from(config.server.limits.max_body_bytes).unwrap_or(i64::MAX),
            ),
            max_connections: Some(
                i64::try_from(config.server.limits.max_connections).unwrap_or(i64::MAX),
            ),
            max_connections_per_client: Some(
                i64::try_from(config.server.limits.max_connections_per_client).unwrap_or(i64::MAX),
            ),
            idle_timeout_ms: i64::try_from(config.server.limits.idle_timeout.as_millis()).ok(),
            max_streams_per_client: i64::try_from(config.server.limits.max_streams_per_client).ok(),
            surface_tokens: config
                .server
                .surface_tokens
                .iter()
                .map(|s| (s.name.clone(), "***".to_owned()))
                .collect(),
            surface_grants: config
                .server
                .surface_tokens
                .iter()
                .map(|s| (s.name.clone(), s.grants.words()))
                .collect(),
        },
        engine: RawEngine {
            max_iterations: Some(i64::from(config.engine.max_iterations)),
            default_model: Some(config.engine.default_model.clone()),
            recover_within_seconds: i64::try_from(config.engine.recover_within.as_secs()).ok(),
            idle_session_seconds: i64::try_from(config.engine.idle_session.as_secs()).ok(),
        },
        scheduler: RawScheduler {
            tick_seconds: i64::try_from(config.scheduler.tick.as_secs()).ok(),
        },
        providers: providers(config),
        platforms: super::platforms::render_platforms(&config.platforms),
        tools: super::tools::RawTools {
            workspaces_dir: Some(config.tools.workspaces_dir.display().to_string()),
            shell_sandbox: Some(config.tools.shell_sandbox.as_str().to_owned()),
        },
        vault: super::vault::render_vault(&config.vault),
        auth: super::auth::render_auth(&config.auth),
        audit: super::audit::render_audit(&config.audit),
        dlp: super::dlp::render_dlp(&config.dlp),
        connectors: super::connectors::render_connectors(&config.connectors),
        tracing: super::tracing::render_tracing(&config.tracing),
        coordinator: super::coordinator::render_coordinator(&config.coordinator),
        network: super::network::render_network(&config.network),
        mcp: super::network::render_mcp(&config.mcp),
        personas: super::network::render_personas(&config.personas),
        database: RawDatabase {
            url: Some(config.database.url.redacted()),
            max_connections: Some(i64::from(config.database.max_connections)),
        },
        log: RawLog {
            format: Some(config.log.format.as_str().to_owned()),
            level: Some(config.log.level.clone()),
        },
    };
    // Serializing plain strings and integers into TOML cannot fail; an empty document would be
    // the visible symptom if it ever did.
    toml::to_string(&raw).unwrap_or_default()
}

/// `[providers.*]` as configured, keys redacted.
fn providers(config: &Config) -> std::collections::BTreeMap<String, RawProvider> {
    let mut out = std::collections::BTreeMap::new();
    if let Some(path) = &config.providers.scripted_script {
        let scripted = RawProvider {
            script: Some(path.display().to_string()),
            ..RawProvider::default()
        };
        out.insert("scripted".to_owned(), scripted);
    }
    for gateway in &config.providers.gateways {
        let kind = match gateway.kind {
            workmate_providers::ProviderKind::Openai => "openai",
            workmate_providers::ProviderKind::Anthropic => "anthropic",
            workmate_providers::ProviderKind::Gemini => "gemini",
        };
        let provider = RawProvider {
            kind: Some(kind.to_owned()),
            base_url: Some(redact_credentials(&gateway.base_url)),
            api_key: gateway.api_key.as_ref().map(|_| "***".to_owned()),
            timeout_ms: Some(i64::try_from(gateway.timeout.as_millis()).unwrap_or(i64::MAX)),
            headers: gateway
                .headers
                .iter()
                .map(|(name, _)| (name.clone(), "***".to_owned()))
                .collect(),
            models: (!gateway.models.is_empty()).then(|| gateway.models.clone()),
            vision_models: (!gateway.capabilities.vision_models.is_empty())
                .then(|| gateway.capabilities.vision_models.clone()),
            pdf_models: (!gateway.capabilities.pdf_models.is_empty())
                .then(|| gateway.capabilities.pdf_models.clone()),
            context_window: gateway.capabilities.context_window.map(i64::from),
            ..RawProvider::default()
        };
        out.insert(gateway.name.clone(), provider);
    }
    out
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
