//! What every turn of every session shares.

use std::sync::Arc;

use workmate_providers::ProviderRouter;
use workmate_store::{Clock, Store};
use workmate_tools::ToolRegistry;

use crate::EngineConfig;
use crate::inbox_wait::InboxWaiters;
use crate::permissions::PermissionConfig;

/// The engine's collaborators.
#[derive(Debug)]
pub(crate) struct Deps {
    pub(crate) store: Store,
    pub(crate) providers: ProviderRouter,
    pub(crate) tools: Arc<ToolRegistry>,
    /// What adds tools that depend on the turn (MCP servers, connectors, messaging).
    pub(crate) sources: Arc<crate::tool_sources::ToolSources>,
    /// The permission policy of tenants that configured none of their own.
    pub(crate) permissions: PermissionConfig,
    pub(crate) config: EngineConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) waiters: InboxWaiters,
    /// What replicas share: model calls per tenant per minute are counted there, live events
    /// fan out through it.
    pub(crate) coordinator: Arc<dyn workmate_coordinator::Coordinator>,
    /// Cancelled when the hub shuts down (as opposed to a person stopping a turn).
    pub(crate) shutdown: tokio_util::sync::CancellationToken,
    /// Who watches the engine (the server's metrics), once installed.
    pub(crate) observer: Arc<crate::observe::ObserverSlot>,
}
