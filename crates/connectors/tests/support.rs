//! A store with a vault, a person's credentials in it, and a turn's scope.

use std::sync::Arc;

use secrecy::SecretString;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use workmate_connectors::{ConnectorSource, CredentialStore, builtin_connectors, secret_name};
use workmate_personas::ConnectorGrant;
use workmate_protocol::{SessionId, TenantId, UserId};
use workmate_store::{ConnectOptions, Store, Vault};
use workmate_tools::{Tool, ToolContext, ToolRepos, ToolResult, ToolScope, ToolSource};
use workmate_vault::{Keyring, MasterKey};

pub(crate) struct World {
    _dir: tempfile::TempDir,
    pub(crate) vault: Vault,
    pub(crate) source: ConnectorSource,
    pub(crate) ctx: ToolContext,
}

impl World {
    /// A world whose connectors may reach the fakes on 127.0.0.1, as an operator's
    /// `[network] allow_private` would allow an internal host.
    pub(crate) async fn new() -> Self {
        Self::with_network(workmate_net::NetworkPolicy::allow_private(["127.0.0.1"]).unwrap()).await
    }

    /// A world whose connectors reach what `network` allows.
    pub(crate) async fn with_network(network: workmate_net::NetworkPolicy) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("store.db").display());
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let keys = Keyring::new(MasterKey::generate("test").unwrap(), Vec::new());
        let vault = Vault::new(store.clone(), Arc::new(keys));
        let source = ConnectorSource::new(
            builtin_connectors(),
            CredentialStore::new(vault.clone()),
            Arc::new(network),
        )
        .unwrap();
        let ctx = ToolContext {
            tenant_id: TenantId::from("slack-T1"),
            session_id: SessionId::new(),
            user_id: UserId::from("slack-U1"),
            channel: "slack:C1".into(),
            persona: "cowork".into(),
            roots: Vec::new(),
            cancel: CancellationToken::new(),
            repos: ToolRepos::unavailable(),
            network: false,
        };
        Self {
            _dir: dir,
            vault,
            source,
            ctx,
        }
    }

    /// Stores `fields` as the caller's credentials for `connector` (`user: false`: the tenant's).
    pub(crate) async fn connect(&self, connector: &str, fields: Value, user: bool) {
        let owner = user.then_some(&self.ctx.user_id);
        let secret = SecretString::from(fields.to_string());
        self.vault
            .put(&self.ctx.tenant_id, owner, &secret_name(connector), &secret)
            .await
            .unwrap();
    }

    /// The tools a turn of the caller gets under `grant`.
    pub(crate) async fn offered(&self, grant: &ConnectorGrant) -> Vec<Arc<dyn Tool>> {
        let scope = ToolScope {
            tenant_id: &self.ctx.tenant_id,
            session_id: &self.ctx.session_id,
            user_id: &self.ctx.user_id,
            persona: "cowork",
            connectors: grant,
            mcp_servers: None,
        };
        self.source.tools(scope).await
    }

    /// Calls the tool `name` as the caller.
    pub(crate) async fn call(&self, name: &str, args: Value) -> ToolResult {
        let tools = self.offered(&ConnectorGrant::All).await;
        let tool = tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        tool.call(&self.ctx, args).await
    }
}

impl World {
    /// The target argument of the tool `name`, as offered to a turn.
    pub(crate) async fn target_of(&self, name: &str) -> Option<String> {
        let tools = self.offered(&ConnectorGrant::All).await;
        let tool = tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        tool.metadata().unwrap().target_arg
    }
}

/// A world whose caller connected `connector` with `fields`, and a fake of its API (whose URL
/// goes in as `base_url`).
pub(crate) async fn connected(connector: &str, mut fields: Value) -> (World, wiremock::MockServer) {
    let world = World::new().await;
    let server = wiremock::MockServer::start().await;
    fields["base_url"] = Value::from(server.uri());
    world.connect(connector, fields, true).await;
    (world, server)
}
