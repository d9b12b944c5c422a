//! Assembling the engine from the configuration: providers, tools, policy, settings.
//!
//! Invariant: the hub is built once per process from the validated configuration; a script file
//! that cannot be read or parsed stops start-up with a one-line error (exit 2).

use std::sync::Arc;

use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{Coordinator, EngineConfig, EngineParts, InProcess, SessionHub};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_store::{Store, SystemClock};
use workmate_tools::{BuiltinOptions, builtin_registry};

use crate::config::Config;
use crate::error::StartupError;

/// The script `workmate demo` runs on.
pub const DEMO_SCRIPT: &str = include_str!("../demo/script.json");

/// The model of demo sessions.
pub const DEMO_MODEL: &str = "scripted:demo";

/// Where the scripted provider's turns come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// `[providers.scripted] script`, if configured.
    Configured,
    /// The bundled demo script (`workmate demo`).
    Demo,
}

/// The model providers, checked before anything is created.
pub fn providers(config: &Config, script: Script) -> Result<ProviderRouter, StartupError> {
    // Model ids without a known provider prefix go to the first OpenAI-compatible gateway (the
    // usual shape of a company gateway), else to the scripted model.
    let default = config
        .providers
        .gateways
        .iter()
        .find(|g| g.kind == workmate_providers::ProviderKind::Openai)
        .map_or("scripted", |g| g.name.as_str());
    let mut providers = ProviderRouter::new(default);
    for gateway in &config.providers.gateways {
        let client = workmate_providers::connect(crate::models::settings(gateway))
            .map_err(|e| StartupError::Usage(format!("[providers.{}]: {e}", gateway.name)))?;
        providers.register(gateway.name.clone(), client);
    }
    let scripted = match (script, &config.providers.scripted_script) {
        (Script::Demo, _) => Some(ScriptedProvider::from_json(DEMO_SCRIPT)),
        (Script::Configured, Some(path)) => Some(ScriptedProvider::from_file(path)),
        (Script::Configured, None) => None,
    };
    if let Some(scripted) = scripted {
        let scripted = scripted.map_err(|e| StartupError::Script(e.to_string()))?;
        providers.register("scripted", Arc::new(scripted));
    }
    Ok(providers)
}

/// What this replica shares with the others: Redis with `[coordinator] redis_url`, else
/// in-process.
pub async fn coordinator(config: &Config) -> Result<Arc<dyn Coordinator>, StartupError> {
    let Some(url) = &config.coordinator.redis_url else {
        return Ok(InProcess::shared());
    };
    let settings = workmate_coordinator::RedisSettings {
        url: url.clone(),
        prefix: config.coordinator.key_prefix.clone(),
        replica: config.server.replica_id.clone(),
    };
    let coordinator = workmate_coordinator::RedisCoordinator::shared(settings)
        .await
        .map_err(|source| StartupError::Coordinator {
            url: crate::config::redacted_url(url),
            source,
        })?;
    tracing::info!(redis = %crate::config::redacted_url(url), "Coordinating with the other replicas through Redis.");
    Ok(coordinator)
}

/// Builds the session hub.
pub fn build_hub(
    config: &Config,
    store: Store,
    providers: ProviderRouter,
    script: Script,
    coordinator: Arc<dyn Coordinator>,
) -> SessionHub {
    let default_model = match script {
        Script::Demo => DEMO_MODEL.to_owned(),
        Script::Configured => config.engine.default_model.clone(),
    };
    let engine = EngineConfig {
        max_iterations: config.engine.max_iterations,
        default_model,
        workspaces_dir: config.tools.workspaces_dir.clone(),
        replica: config.server.replica_id.clone(),
        recover_within: config.engine.recover_within,
        lease_ttl: config.coordinator.session_lease,
        idle_session: config.engine.idle_session,
        ..EngineConfig::default()
    };
    SessionHub::with_coordinator(
        EngineParts {
            store,
            providers,
            tools: builtin_registry(&BuiltinOptions {
                shell_sandbox: config.tools.shell_sandbox.sandbox(),
                network: Arc::clone(&config.network.policy),
            }),
            permissions: PermissionConfig::default(),
            config: engine,
            clock: Arc::new(SystemClock),
        },
        coordinator,
    )
}

/// The vault, when a master key is configured.
pub(crate) fn vault(config: &Config, store: &Store) -> Option<workmate_store::Vault> {
    match config.vault.keyring() {
        Ok(Some(ring)) => Some(workmate_store::Vault::new(store.clone(), Arc::new(ring))),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(error = %e, "The vault's master key cannot be read.");
            None
        }
    }
}

/// The tenants' MCP servers: stdio ones in the same sandbox as `run_shell`, seeing only folders
/// under `[mcp] folder_roots` and never workmate's own (data, workspaces, configuration); http
/// ones reached through the guarded egress; `${vault:…}` references read from the vault when a
/// master key is configured. Fails only when TLS cannot be set up.
pub fn mcp_servers(
    config: &Config,
    store: &Store,
) -> Result<Arc<workmate_mcp::McpManager>, String> {
    let mut protected = vec![
        config.server.data_dir.clone(),
        config.tools.workspaces_dir.clone(),
    ];
    protected.extend(config.config_dir.clone());
    let settings = workmate_mcp::McpSettings {
        sandbox: config.tools.shell_sandbox.sandbox(),
        network: Arc::clone(&config.network.policy),
        folders: workmate_mcp::FolderPolicy::new(&config.mcp.folder_roots, &protected),
    };
    workmate_mcp::McpManager::new(store.clone(), settings, vault(config, store)).map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_script_parses() {
        ScriptedProvider::from_json(DEMO_SCRIPT).unwrap();
    }
}
