//! Tools that depend on who calls: a tenant's MCP servers, the connectors a person connected, the
//! chat platforms to post to. The engine asks every source once per turn, after it knows the
//! tenant, the requester and the persona.
//!
//! Invariants: a source never fails a turn (a source that cannot list its tools returns what it
//! can and logs why); the tools it returns are named so they cannot shadow a built-in (a source's
//! tool of a taken name is dropped); the metadata a source declares by name ([`ToolSource::metadata`])
//! is the metadata its tools carry, so decisions made outside a turn (who may approve, which
//! standing rules may be minted) classify them the same way.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use workmate_protocol::{SessionId, TenantId, UserId};

use crate::{Tool, ToolMetadata};

/// Which connectors a persona may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectorGrant {
    /// None.
    None,
    /// Every connector the tenant has (built-ins only).
    All,
    /// These connectors.
    Ids(Vec<String>),
}

/// Who a turn's tools are for.
#[derive(Clone, Copy, Debug)]
pub struct ToolScope<'a> {
    /// The tenant of the session.
    pub tenant_id: &'a TenantId,
    /// The session.
    pub session_id: &'a SessionId,
    /// Who the turn acts for (its credentials are the ones used).
    pub user_id: &'a UserId,
    /// The persona answering.
    pub persona: &'a str,
    /// The connectors that persona may use.
    pub connectors: &'a ConnectorGrant,
    /// The tenant's MCP servers that persona's sessions get, when it narrows them.
    pub mcp_servers: Option<&'a [String]>,
}

impl ToolScope<'_> {
    /// Whether the persona may use the connector `id`.
    pub fn allows_connector(&self, id: &str) -> bool {
        match self.connectors {
            ConnectorGrant::None => false,
            ConnectorGrant::All => true,
            ConnectorGrant::Ids(ids) => ids.iter().any(|c| c == id),
        }
    }

    /// Whether the persona's sessions get the tenant's MCP server `name`.
    pub fn allows_mcp_server(&self, name: &str) -> bool {
        self.mcp_servers
            .is_none_or(|servers| servers.iter().any(|s| s == name))
    }
}

/// The future a source's listing returns.
pub type ToolsFuture<'a> = Pin<Box<dyn Future<Output = Vec<Arc<dyn Tool>>> + Send + 'a>>;

/// A provider of tools that depend on the scope of a turn.
pub trait ToolSource: Send + Sync + fmt::Debug {
    /// The tools a turn in `scope` may be offered.
    fn tools<'a>(&'a self, scope: ToolScope<'a>) -> ToolsFuture<'a>;

    /// What the tool `name` declares, when this source provides tools of that name, without a
    /// turn (for checks made when an approval is answered or a rule is requested).
    fn metadata(&self, name: &str) -> Option<ToolMetadata>;
}
