//! [`Chat`]: the chat layer's handle, and the state every feature shares — the registered
//! platforms ([`Slot`]s) and the layer's wiring ([`Inner`]).
//!
//! Invariants: this module holds data and lookups only; it imports no feature module (the
//! features add their `impl Chat` blocks and depend on it, and `layer`, the composition root,
//! builds it). A surface has at most one slot; the sandbox's cards go to Slack's.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use workmate_adapter::{ChatPlatform, Coalescer, FALLBACK_DEDUPE_WINDOW, Platform, RetryPolicy};
use workmate_engine::{Scheduler, SessionHub};
use workmate_protocol::Surface;
use workmate_store::Store;

use crate::account_links::AccountLinks;
use crate::config::{ChatConfig, IntakeObserver};
use crate::connect_links::ConnectLinks;
use crate::error::{ChatError, Result};
use crate::pump::Pumps;
use crate::queue::Intake;
use crate::tenants::KnownTenants;

/// One registered platform and its card plumbing.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) platform: Arc<dyn Platform>,
    pub(crate) coalescer: Arc<Coalescer>,
    pub(crate) pumps: Arc<Pumps>,
    pub(crate) admins: HashSet<String>,
    /// The installation `admins` are admins of, if only one.
    pub(crate) admins_in: Option<String>,
    /// The one retry policy of this platform's calls (the coalescer's too).
    pub(crate) retry: RetryPolicy,
}

/// The chat layer. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Chat {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) hub: SessionHub,
    pub(crate) store: Store,
    pub(crate) config: ChatConfig,
    platforms: RwLock<HashMap<Surface, Arc<Slot>>>,
    pub(crate) scheduler: OnceLock<Scheduler>,
    /// The tenants' MCP servers, once attached.
    pub(crate) mcp: OnceLock<Arc<workmate_mcp::McpManager>>,
    pub(crate) connectors: OnceLock<Arc<workmate_connectors::ConnectorSource>>,
    pub(crate) connect_links: OnceLock<Arc<dyn ConnectLinks>>,
    /// What counts deliveries, once set.
    pub(crate) observer: OnceLock<Arc<dyn IntakeObserver>>,
    /// What makes "link your account" URLs, when single sign-on is set up.
    pub(crate) links: OnceLock<Arc<dyn AccountLinks>>,
    pub(crate) intake: Intake,
    /// Tenants known to exist, so a delivery does not write to ensure its tenant again.
    pub(crate) tenants: KnownTenants,
    pub(crate) stop: CancellationToken,
    pub(crate) tasks: TaskTracker,
    /// When this layer was made, by the store's clock: whatever this replica's name claimed
    /// before was claimed by an earlier process (see `intake`).
    pub(crate) started_ms: i64,
}

impl Chat {
    /// A layer with no platform registered and nothing attached yet.
    pub(crate) fn empty(hub: SessionHub, store: Store, config: ChatConfig) -> Self {
        let started_ms = store.clock_ms();
        Self {
            inner: Arc::new(Inner {
                hub,
                store,
                intake: Intake::new(config.workers),
                tenants: KnownTenants::default(),
                config,
                platforms: RwLock::default(),
                scheduler: OnceLock::new(),
                mcp: OnceLock::new(),
                connectors: OnceLock::new(),
                connect_links: OnceLock::new(),
                links: OnceLock::new(),
                observer: OnceLock::new(),
                stop: CancellationToken::new(),
                tasks: TaskTracker::new(),
                started_ms,
            }),
        }
    }

    pub(crate) fn hub(&self) -> &SessionHub {
        &self.inner.hub
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Makes `slot` the one that shows `surface`'s cards, replacing any before it.
    pub(crate) fn install(&self, surface: Surface, slot: Slot) {
        self.inner
            .platforms
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(surface, Arc::new(slot));
    }

    /// The registered platform that shows `surface`'s cards (the sandbox stands in for Slack).
    pub(crate) fn slot(&self, surface: Surface) -> Result<Arc<Slot>> {
        let surface = surface.platform();
        self.inner
            .platforms
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&surface)
            .cloned()
            .ok_or(ChatError::NoPlatform(surface.as_str()))
    }

    /// The registered platforms' fixed facts.
    pub(crate) fn described(&self) -> Vec<&'static ChatPlatform> {
        self.slots()
            .iter()
            .map(|slot| slot.platform.describe())
            .collect()
    }

    /// How long a delivery from `surface` is remembered, so its platform's redelivery is
    /// recognised.
    pub(crate) fn dedupe_window(&self, surface: Surface) -> Duration {
        self.slot(surface).map_or(FALLBACK_DEDUPE_WINDOW, |slot| {
            slot.platform.describe().dedupe_window
        })
    }

    /// Every registered platform's slot.
    pub(crate) fn slots(&self) -> Vec<Arc<Slot>> {
        self.inner
            .platforms
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }
}
