//! Connectors as a source of a turn's tools: a connector's tools are offered when the persona may
//! use it and the requester (or the tenant) has connected it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use workmate_protocol::{TenantId, UserId};
use workmate_tools::{Tool, ToolMetadata, ToolScope, ToolSource, ToolsFuture};

use crate::tool::ConnectorTool;
use crate::{Connector, CredentialStore, Http, Owner};

/// How long a person's list of connected connectors is reused before the vault is read again (a
/// connection made or removed shows in turns within this).
const CONNECTED_TTL: Duration = Duration::from_secs(5);

type Connected = Arc<Vec<(String, Owner)>>;

/// Every connector workmate ships.
pub fn builtin_connectors() -> Vec<Arc<dyn Connector>> {
    vec![
        Arc::new(crate::GitHub),
        Arc::new(crate::GitLab),
        Arc::new(crate::Jira),
        Arc::new(crate::Confluence),
        Arc::new(crate::Notion),
        Arc::new(crate::Gmail),
        Arc::new(crate::GoogleCalendar),
        Arc::new(crate::FeishuWorkspace),
        Arc::new(crate::DingTalkDocs),
    ]
}

/// Offers connectors' tools.
#[derive(Debug)]
pub struct ConnectorSource {
    pub(crate) connectors: Vec<Arc<dyn Connector>>,
    pub(crate) credentials: CredentialStore,
    http: Http,
    pub(crate) connected: Mutex<HashMap<(TenantId, UserId), (Instant, Connected)>>,
}

impl ConnectorSource {
    /// `connectors`, with credentials from `credentials`, reaching what `network` allows.
    pub fn new(
        connectors: Vec<Arc<dyn Connector>>,
        credentials: CredentialStore,
        network: Arc<workmate_net::NetworkPolicy>,
    ) -> Result<Self, String> {
        Ok(Self {
            connectors,
            credentials,
            http: Http::new(network)?,
            connected: Mutex::default(),
        })
    }

    /// What the person connected (or the tenant did), at most [`CONNECTED_TTL`] old.
    async fn connected(&self, tenant: &TenantId, user: &UserId) -> Result<Connected, String> {
        let key = (tenant.clone(), user.clone());
        {
            let cache = self
                .connected
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((at, connected)) = cache.get(&key)
                && at.elapsed() < CONNECTED_TTL
            {
                return Ok(Arc::clone(connected));
            }
        }
        let connected = Arc::new(self.credentials.connected(tenant, user).await?);
        let mut cache = self
            .connected
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A bounded cache: past 10,000 people it starts over.
        if cache.len() >= 10_000 {
            cache.clear();
        }
        cache.insert(key, (Instant::now(), Arc::clone(&connected)));
        Ok(connected)
    }

    /// Every tool of `connector` (by name), whether connected or not.
    pub fn tools_of(&self, connector: &str) -> Vec<Arc<dyn Tool>> {
        self.connectors
            .iter()
            .filter(|c| c.descriptor().name == connector)
            .flat_map(|c| self.wrap(c))
            .collect()
    }

    fn wrap(&self, connector: &Arc<dyn Connector>) -> Vec<Arc<dyn Tool>> {
        connector
            .descriptor()
            .tools
            .iter()
            .map(|def| {
                Arc::new(ConnectorTool {
                    connector: Arc::clone(connector),
                    def: def.clone(),
                    credentials: self.credentials.clone(),
                    http: self.http.clone(),
                }) as Arc<dyn Tool>
            })
            .collect()
    }
}

impl ToolSource for ConnectorSource {
    fn tools<'a>(&'a self, scope: ToolScope<'a>) -> ToolsFuture<'a> {
        Box::pin(async move {
            let allowed: Vec<_> = self
                .connectors
                .iter()
                .filter(|c| scope.allows_connector(c.descriptor().name))
                .collect();
            if allowed.is_empty() {
                return Vec::new();
            }
            let connected = match self.connected(scope.tenant_id, scope.user_id).await {
                Ok(connected) => connected,
                Err(e) => {
                    tracing::warn!(tenant = %scope.tenant_id, error = %e, "Connectors left out of the turn.");
                    return Vec::new();
                }
            };
            allowed
                .into_iter()
                .filter(|c| {
                    connected
                        .iter()
                        .any(|(name, _)| name == c.descriptor().name)
                })
                .flat_map(|c| self.wrap(c))
                .collect()
        })
    }

    fn metadata(&self, name: &str) -> Option<ToolMetadata> {
        self.connectors
            .iter()
            .flat_map(|c| c.descriptor().tools.iter())
            .find(|t| t.name == name)
            .map(crate::ToolDef::metadata)
    }
}
