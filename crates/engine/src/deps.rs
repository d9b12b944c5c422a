//! What every turn of every session shares.

use std::sync::Arc;

use workmate_providers::ProviderRouter;
use workmate_store::{Clock, Store};
use workmate_tools::ToolRegistry;

use crate::EngineConfig;
use crate::inbox_wait::InboxWaiters;
use crate::policy::Policy;

/// The engine's collaborators.
#[derive(Debug)]
pub(crate) struct Deps {
    pub(crate) store: Store,
    pub(crate) providers: ProviderRouter,
    pub(crate) tools: ToolRegistry,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) config: EngineConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) waiters: InboxWaiters,
}
