//! The tenants' registered servers: the registry admins manage, and the live servers turns use.
//!
//! Invariants: a definition is checked before it is stored; a turn reads a tenant's definitions
//! from a cache at most 5 s old (a change through this process is seen at once, one through
//! another replica within 5 s); a changed or removed definition drops the old server (its process
//! is killed once no call is using it); a server that cannot be listed is left out of a turn,
//! never failing it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use workmate_protocol::{TenantId, UserId};
use workmate_store::{NewAuditRecord, Store, Vault};
use workmate_tools::{ShellSandbox, Tool};

use crate::definition::{ServerDef, check_name};
use crate::folders::FolderPolicy;
use crate::secrets::Secrets;
use crate::server::{Launcher, Server, ServerState};
use crate::tool::{McpTool, tool_name};
use crate::{Error, Result};

/// How long a tenant's definitions are reused before they are read again.
const DEFINITIONS_TTL: Duration = Duration::from_secs(5);

type Definitions = Arc<Vec<(String, ServerDef)>>;

/// A live server's key: its tenant, its name, and (for one people sign in to) the person.
type ServerKey = (TenantId, String, Option<UserId>);

/// What the operator lets MCP servers use.
#[derive(Clone, Debug, Default)]
pub struct McpSettings {
    /// How stdio servers are isolated.
    pub sandbox: ShellSandbox,
    /// What http servers and their authorization servers may be reached at (`[network]`).
    pub network: Arc<workmate_net::NetworkPolicy>,
    /// Which host folders stdio servers may see (`[mcp] folder_roots`).
    pub folders: FolderPolicy,
}

/// A registered server and what it is doing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// Its definition, with the values of variables, headers and secrets as `***`.
    pub definition: ServerDef,
    /// What it is doing.
    pub state: ServerState,
    /// Who last changed it.
    pub updated_by: String,
}

impl ServerStatus {
    /// What a member (not an admin) may see: no environment, headers or stderr.
    #[must_use]
    pub fn for_members(mut self) -> Self {
        self.definition = self.definition.for_members();
        self.state.stderr = None;
        self
    }
}

/// A tool of a server, for `/workmate mcp tools`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ToolInfo {
    /// The name the model calls it by (`mcp__<server>__<tool>`).
    pub name: String,
    /// The server's own name for it.
    pub remote: String,
    /// What it does, as the server says.
    pub description: String,
    /// Whether it runs without approval (the admin listed it in `read_only_tools`).
    pub read_only: bool,
    /// Whether it is offered (not filtered out by `include_tools` / `exclude_tools`).
    pub offered: bool,
}

/// The MCP servers of every tenant.
#[derive(Debug)]
pub struct McpManager {
    store: Store,
    pub(crate) launcher: Arc<Launcher>,
    /// Live servers by tenant, name and (for one people sign in to) person.
    servers: Mutex<HashMap<ServerKey, Arc<Server>>>,
    definitions: Mutex<HashMap<TenantId, (Instant, Definitions)>>,
}

impl McpManager {
    /// Servers registered in `store`, within what `settings` allow, `${vault:…}` references
    /// read from `vault`; fails only when TLS cannot be set up.
    pub fn new(
        store: Store,
        settings: McpSettings,
        vault: Option<Vault>,
    ) -> std::result::Result<Self, String> {
        let calls = workmate_net::EgressOptions::credentialed();
        let egress = workmate_net::Egress::new(Arc::clone(&settings.network), calls.clone())?;
        // A streamable HTTP session holds its answer stream open: no overall deadline (every
        // call has its own).
        let sessions = workmate_net::Egress::new(settings.network, calls.with_timeout(None))?;
        Ok(Self {
            store,
            launcher: Arc::new(Launcher {
                sandbox: settings.sandbox,
                secrets: Secrets { vault },
                egress,
                sessions,
                folders: settings.folders,
            }),
            servers: Mutex::default(),
            definitions: Mutex::default(),
        })
    }

    /// Registers (or replaces) `name`; `true` when it is new.
    pub async fn add(
        &self,
        tenant: &TenantId,
        name: &str,
        definition: &ServerDef,
        by: &str,
    ) -> Result<bool> {
        check_name(name)?;
        definition.check()?;
        // What the operator allows is checked before any secret is moved into the vault.
        let folders = self.launcher.folders.admit_all(&definition.folders)?;
        if let crate::Transport::Http { url } = definition.transport()? {
            let url = url::Url::parse(url).map_err(|e| Error::Invalid(e.to_string()))?;
            self.launcher
                .egress
                .client_for(&url)
                .map_err(|e| Error::NotAllowed(format!("\"url\": {e}")))?;
        }
        let mut definition = self.launcher.secrets.seal(tenant, name, definition).await?;
        definition.folders = folders;
        let definition = &definition;
        let json = serde_json::to_value(definition)
            .map_err(|e| Error::Invalid(format!("cannot store the definition: {e}")))?;
        let transport = match definition.transport()? {
            crate::Transport::Stdio { command } => serde_json::json!({
                "stdio": command, "folders": definition.folders, "network": definition.network
            }),
            crate::Transport::Http { url } => serde_json::json!({ "http": url }),
        };
        let audit = NewAuditRecord {
            session_id: None,
            actor: Some(by.to_owned()),
            stage: "mcp_server_registered".into(),
            tool: None,
            status: Some("ok".into()),
            detail: serde_json::json!({
                "server": name, "transport": transport, "read_only_tools": definition.read_only_tools
            }),
        };
        let created = self
            .store
            .mcp_servers()
            .put(tenant, name, &json, by, &audit)
            .await?;
        self.forget(tenant, Some(name));
        tracing::info!(tenant = %tenant, server = name, by, created, "MCP server registered.");
        Ok(created)
    }

    /// Removes `name` (stopping its process); `true` when it was registered.
    pub async fn remove(&self, tenant: &TenantId, name: &str, by: &str) -> Result<bool> {
        let audit = NewAuditRecord {
            session_id: None,
            actor: Some(by.to_owned()),
            stage: "mcp_server_removed".into(),
            tool: None,
            status: Some("ok".into()),
            detail: serde_json::json!({"server": name}),
        };
        let removed = self
            .store
            .mcp_servers()
            .remove(tenant, name, &audit)
            .await?;
        self.forget(tenant, Some(name));
        tracing::info!(tenant = %tenant, server = name, removed, "MCP server removed.");
        Ok(removed)
    }

    /// Every registered server of the tenant, read from the store now, with what it is doing.
    pub async fn list(&self, tenant: &TenantId) -> Result<Vec<ServerStatus>> {
        let records = self.store.mcp_servers().list(tenant).await?;
        let mut out = Vec::with_capacity(records.len());
        for record in records {
            let definition = match ServerDef::parse(&record.definition) {
                Ok((_, def)) => def,
                Err(e) => {
                    tracing::warn!(tenant = %tenant, server = %record.name, error = %e, "Stored MCP server definition does not parse.");
                    continue;
                }
            };
            let state = match self.live(tenant, &record.name, &definition) {
                Some(server) => server.state().await,
                None => ServerState {
                    status: if definition.oauth.is_some() {
                        "per person (each signs in)"
                    } else {
                        "not started"
                    },
                    pid: None,
                    tools: None,
                    last_error: None,
                    stderr: None,
                    restarts: 0,
                    retry_in_s: None,
                },
            };
            out.push(ServerStatus {
                name: record.name,
                definition: definition.redacted(),
                state,
                updated_by: record.updated_by,
            });
        }
        Ok(out)
    }

    /// The tools of server `name` as `user` sees them, starting it if it is not running.
    pub async fn server_tools(
        &self,
        tenant: &TenantId,
        name: &str,
        user: &UserId,
    ) -> Result<Vec<ToolInfo>> {
        self.forget(tenant, None);
        let definitions = self.definitions(tenant).await?;
        let Some((_, def)) = definitions.iter().find(|(n, _)| n == name) else {
            return Err(Error::NotFound(name.to_owned()));
        };
        let server = self.server(tenant, name, def, user);
        let tools = server.tools().await.map_err(|message| Error::Unavailable {
            server: name.to_owned(),
            message,
        })?;
        Ok(tools
            .iter()
            .map(|t| ToolInfo {
                name: tool_name(name, &t.name),
                remote: t.name.to_string(),
                description: t.description.as_deref().unwrap_or_default().to_owned(),
                read_only: def.read_only_tools.contains(t.name.as_ref()),
                offered: def.offers(&t.name),
            })
            .collect())
    }

    /// The tools the tenant's enabled servers offer `user`, of only the `servers` named when
    /// given (a persona's `mcp:` list); servers that cannot start, and those people sign in to
    /// that `user` has not, are left out.
    pub async fn tools(
        &self,
        tenant: &TenantId,
        user: &UserId,
        servers: Option<&[String]>,
    ) -> Vec<Arc<dyn Tool>> {
        let definitions = match self.definitions(tenant).await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(tenant = %tenant, error = %e, "Cannot read the MCP servers.");
                return Vec::new();
            }
        };
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        let chosen = |name: &str| servers.is_none_or(|s| s.iter().any(|n| n == name));
        for (name, def) in definitions
            .iter()
            .filter(|(name, d)| d.is_enabled() && chosen(name))
        {
            if def.oauth.is_some() && !self.signed_in(tenant, user, name).await {
                tracing::debug!(tenant = %tenant, server = %name, user = %user, "Not signed in to the MCP server; its tools are left out.");
                continue;
            }
            let server = self.server(tenant, name, def, user);
            match server.tools().await {
                Ok(tools) => out.extend(
                    tools
                        .iter()
                        .filter(|t| def.offers(&t.name))
                        .map(|t| Arc::new(McpTool::new(Arc::clone(&server), t)) as Arc<dyn Tool>),
                ),
                Err(e) => {
                    tracing::warn!(tenant = %tenant, server = %name, error = %e, "MCP server left out of the turn.");
                }
            }
        }
        out
    }

    /// The live server for this definition (for `user`, when people sign in to it), replacing
    /// one of an older definition.
    fn server(&self, tenant: &TenantId, name: &str, def: &ServerDef, user: &UserId) -> Arc<Server> {
        let mut servers = self
            .servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let user = def.oauth.as_ref().map(|_| user.clone());
        let key = (tenant.clone(), name.to_owned(), user.clone());
        if let Some(server) = servers.get(&key)
            && server.def == *def
        {
            return Arc::clone(server);
        }
        let server = Server::new(
            tenant.clone(),
            name.to_owned(),
            user,
            def.clone(),
            Arc::clone(&self.launcher),
        );
        servers.insert(key, Arc::clone(&server));
        server
    }

    fn live(&self, tenant: &TenantId, name: &str, def: &ServerDef) -> Option<Arc<Server>> {
        let servers = self
            .servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        servers
            .get(&(tenant.clone(), name.to_owned(), None))
            .filter(|s| s.def == *def)
            .cloned()
    }

    pub(crate) async fn definitions(&self, tenant: &TenantId) -> Result<Definitions> {
        {
            let cache = self
                .definitions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((at, defs)) = cache.get(tenant)
                && at.elapsed() < DEFINITIONS_TTL
            {
                return Ok(Arc::clone(defs));
            }
        }
        let records = self.store.mcp_servers().list(tenant).await?;
        let defs: Vec<(String, ServerDef)> = records
            .into_iter()
            .filter_map(|r| match ServerDef::parse(&r.definition) {
                Ok((_, def)) => Some((r.name, def)),
                Err(e) => {
                    tracing::warn!(tenant = %tenant, server = %r.name, error = %e, "Stored MCP server definition does not parse.");
                    None
                }
            })
            .collect();
        let defs = Arc::new(defs);
        let mut cache = self
            .definitions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.insert(tenant.clone(), (Instant::now(), Arc::clone(&defs)));
        Ok(defs)
    }

    /// Drops the tenant's cached definitions, and the live server `name` when given.
    fn forget(&self, tenant: &TenantId, name: Option<&str>) {
        self.definitions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(tenant);
        if let Some(name) = name {
            self.servers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .retain(|(t, n, _), _| t != tenant || n != name);
        }
    }

    /// Drops `user`'s live connection to server `name` (they signed in again).
    pub(crate) fn forget_user(&self, tenant: &TenantId, name: &str, user: &UserId) {
        self.servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&(tenant.clone(), name.to_owned(), Some(user.clone())));
    }
}
