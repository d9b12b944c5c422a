//! [`Chat`]: the chat layer's handle, shared by every platform's routes and connections.
//!
//! Invariants: platforms are registered before their deliveries are accepted; each registered
//! platform has one coalescer and one set of card pumps; on shutdown no new delivery is taken,
//! the deliveries already running finish, then pumps stop and pending card updates are sent for
//! at most the grace period.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use workmate_adapter::{
    BoxFuture, ChatPlatform, ClickReply, Coalescer, CommandReply, FALLBACK_DEDUPE_WINDOW, Inbound,
    InboundKind, InboundSink, NotTaken, Platform, RetryPolicy, Taken,
};
use workmate_engine::{Scheduler, SessionHub};
use workmate_protocol::Surface;
use workmate_store::Store;

use crate::cards_store::StoreCards;
use crate::intake::Intake;
use crate::pump::Pumps;
use crate::{ChatError, Result};

/// How the chat layer runs.
#[derive(Clone, Debug)]
pub struct ChatConfig {
    /// Deliveries processed at once.
    pub workers: usize,
    /// How long a worker holds a claimed delivery before another may take it over (renewed
    /// while a message waits to join a running turn).
    pub lease: Duration,
    /// How often the intake table is swept for deliveries nobody is running (after a restart,
    /// or left by a replica that died).
    pub sweep_every: Duration,
    /// Attempts at a delivery before it is given up (and the thread told).
    pub max_attempts: i64,
    /// The wait after a delivery's first failed attempt; it doubles with each further one, up to
    /// 30 s.
    pub backoff: Duration,
    /// A card pump without events for this long stops; the next delivery restarts it.
    pub pump_idle: Duration,
    /// How long a replica's hold on a long connection lasts without renewal (see
    /// [`Chat::hold`]): a replica that died loses the connection to another after this long.
    pub connection_lease: Duration,
    /// The most deliveries one tenant's installation of a platform may hand over in any
    /// minute, counted through the coordinator (for all replicas when it is shared); more are
    /// refused unacknowledged. `None`: no limit.
    pub deliveries_per_minute: Option<u32>,
    /// The one retry policy of platform calls.
    pub retry: RetryPolicy,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            workers: 16,
            lease: Duration::from_secs(15),
            sweep_every: Duration::from_secs(1),
            max_attempts: 5,
            backoff: Duration::from_secs(1),
            pump_idle: Duration::from_secs(300),
            connection_lease: Duration::from_secs(15),
            deliveries_per_minute: None,
            retry: RetryPolicy::default(),
        }
    }
}

/// Sees every delivery a platform hands over, and what became of it, before the platform is
/// answered (an HTTP response, a long connection's ack).
pub trait IntakeObserver: Send + Sync + std::fmt::Debug {
    /// A delivery from `platform` was `stored`, a `duplicate`, or `not_stored` (the platform
    /// will send it again), after `elapsed`.
    fn delivery(&self, platform: Surface, outcome: &'static str, elapsed: Duration);
}

/// What an operator configured for one platform.
#[derive(Clone, Debug, Default)]
pub struct PlatformSettings {
    /// Platform user ids made tenant admins the first time workmate sees them.
    pub admins: Vec<String>,
    /// The one installation (a DingTalk organisation's corp id, …) in which `admins` are
    /// admins; `None`: in every installation. A configured id seen first in another
    /// installation is a member there.
    pub admins_in: Option<String>,
}

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
    pub(crate) connect_links: OnceLock<Arc<dyn crate::connect_links::ConnectLinks>>,
    /// What counts deliveries, once set.
    pub(crate) observer: OnceLock<Arc<dyn IntakeObserver>>,
    /// What makes "link your account" URLs, when single sign-on is set up.
    pub(crate) links: OnceLock<Arc<dyn crate::directory::AccountLinks>>,
    pub(crate) intake: Intake,
    /// Tenants known to exist, so a delivery does not write to ensure its tenant again.
    pub(crate) tenants: crate::identity::KnownTenants,
    pub(crate) stop: CancellationToken,
    pub(crate) tasks: TaskTracker,
    /// When this layer was made, by the store's clock: whatever this replica's name claimed
    /// before was claimed by an earlier process (see [`crate::intake`]).
    pub(crate) started_ms: i64,
}

impl Chat {
    /// The chat layer over `hub`, storing deliveries in `store`. Register the platforms, then
    /// [`Chat::start`] the workers.
    pub fn new(hub: SessionHub, store: Store, config: ChatConfig) -> Self {
        let store_started = store.clock_ms();
        let chat = Self {
            inner: Arc::new(Inner {
                hub,
                store,
                intake: Intake::new(config.workers),
                tenants: crate::identity::KnownTenants::default(),
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
                started_ms: store_started,
            }),
        };
        // Turns of a platform's tenants may post to its other chats (`send_message`).
        let messaging = crate::send_message::Messaging::new(&chat.inner);
        chat.inner.hub.add_tool_source(Arc::new(messaging));
        chat
    }

    /// Values every replica reads: in the coordinator when it is shared, else in the database.
    pub fn shared_values(&self) -> Arc<dyn workmate_adapter::SharedValues> {
        Arc::new(crate::shared_values::ReplicaValues {
            coordinator: Arc::clone(self.inner.hub.coordinator()),
            store: self.inner.store.clone(),
        })
    }

    /// Starts the intake workers, which also pick up what an earlier process left unfinished.
    /// Call it once the platforms are registered (a delivery for a platform not registered yet
    /// would wait for a retry). Must be called inside a tokio runtime; a second call does
    /// nothing.
    pub fn start(&self) {
        crate::intake::start(self);
    }

    /// Registers a platform: its cards are posted through it, its deliveries accepted. A second
    /// registration of the same surface replaces the first.
    pub fn register(&self, platform: Arc<dyn Platform>, settings: PlatformSettings) {
        let surface = platform.surface();
        let coalescer = Arc::new(Coalescer::new(
            Arc::clone(&platform) as Arc<dyn workmate_adapter::ChatAdapter>,
            Arc::new(StoreCards(self.inner.store.clone())),
            self.inner.config.retry.clone(),
        ));
        let pumps = Arc::new(Pumps::new(
            self.inner.hub.clone(),
            self.inner.store.clone(),
            Arc::clone(&platform),
            Arc::clone(&coalescer),
            self.inner.config.pump_idle,
        ));
        let slot = Slot {
            platform,
            coalescer,
            pumps,
            admins: settings.admins.into_iter().collect(),
            admins_in: settings.admins_in,
            retry: self.inner.config.retry.clone(),
        };
        self.inner
            .platforms
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(surface, Arc::new(slot));
    }

    /// Gives `/workmate automations run` the scheduler; a second call changes nothing. The
    /// scheduler's run observer holds this layer, so the two keep each other alive: both are
    /// meant to live as long as the server.
    pub fn attach_scheduler(&self, scheduler: Scheduler) {
        if self.inner.scheduler.set(scheduler).is_err() {
            tracing::debug!("The chat layer already has a scheduler.");
        }
    }

    /// Gives `/workmate mcp` the tenants' MCP servers (once; later calls are ignored).
    pub fn attach_mcp(&self, mcp: Arc<workmate_mcp::McpManager>) {
        if self.inner.mcp.set(mcp).is_err() {
            tracing::debug!("The chat layer already has MCP servers.");
        }
    }

    /// The tenants' MCP servers, when attached.
    pub fn mcp(&self) -> Option<&Arc<workmate_mcp::McpManager>> {
        self.inner.mcp.get()
    }

    /// Gives `/workmate connectors` the connectors, and what makes their connect links (once;
    /// later calls are ignored).
    pub fn attach_connectors(
        &self,
        connectors: Arc<workmate_connectors::ConnectorSource>,
        links: Arc<dyn crate::connect_links::ConnectLinks>,
    ) {
        if self.inner.connectors.set(connectors).is_err()
            || self.inner.connect_links.set(links).is_err()
        {
            tracing::debug!("The chat layer already has connectors.");
        }
    }

    /// Stores a delivery before the platform is acknowledged. [`Taken::Duplicate`] for one seen
    /// before (acknowledge it, apply nothing). An error means nothing was stored: answer so the
    /// platform delivers it again (HTTP 503, or no ack).
    pub async fn accept(&self, inbound: Inbound) -> Result<Taken> {
        let started = std::time::Instant::now();
        let surface = inbound.surface;
        let span = tracing::info_span!("chat.delivery", platform = surface.as_str());
        let taken =
            tracing::Instrument::instrument(crate::intake::accept(self, &inbound), span).await;
        if let Some(observer) = self.inner.observer.get() {
            let outcome = match &taken {
                Ok(Taken::Stored) => "stored",
                Ok(Taken::Duplicate) => "duplicate",
                Err(_) => "not_stored",
            };
            observer.delivery(surface, outcome, started.elapsed());
        }
        taken
    }

    /// Sets what counts deliveries (the server's metrics); a second call changes nothing.
    pub fn observe(&self, observer: Arc<dyn IntakeObserver>) {
        if self.inner.observer.set(observer).is_err() {
            tracing::debug!("The chat layer already has an intake observer.");
        }
    }

    /// Runs a native slash command now and returns its reply. A replayed command (the same
    /// delivery id) is not applied again; its reply says so.
    pub async fn command(&self, inbound: Inbound) -> CommandReply {
        crate::jobs::slash_command(self, inbound).await
    }

    /// How many sessions have a live card pump, on every platform.
    pub fn active_pumps(&self) -> usize {
        self.slots().iter().map(|slot| slot.pumps.active()).sum()
    }

    /// How many entries the chat layer's in-memory caches hold, by cache name, on every
    /// platform: card views kept for the next pump of a session, card updates waiting to be
    /// sent, and each platform's own.
    pub fn cached_items(&self) -> Vec<(&'static str, u64)> {
        let slots = self.slots();
        let mut items = vec![
            (
                "card_views",
                slots.iter().map(|s| s.pumps.kept_views()).sum(),
            ),
            (
                "card_updates",
                slots.iter().map(|s| s.coalescer.active() as u64).sum(),
            ),
        ];
        for slot in &slots {
            items.extend(slot.platform.cached_items());
        }
        items
    }

    /// Deliveries accepted and not yet finished, in this process's intake.
    pub fn in_flight(&self) -> usize {
        self.inner.intake.in_flight()
    }

    /// Takes no new deliveries, lets the running ones finish for at most `grace`, stops the
    /// pumps, and sends pending card updates for at most `grace`. Deliveries not started, or not
    /// finished in time, stay in the table and run again at the next start (or on another
    /// replica); a message's row is finished only with the message stored, so none runs twice.
    pub async fn shutdown(&self, grace: Duration) {
        self.inner.stop.cancel();
        self.inner.tasks.close();
        if tokio::time::timeout(grace, self.inner.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "Deliveries still running after the grace period are left for the next start."
            );
        }
        for slot in self.slots() {
            slot.pumps.shutdown().await;
            slot.coalescer.shutdown(grace).await;
        }
    }

    pub(crate) fn hub(&self) -> &SessionHub {
        &self.inner.hub
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
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

    fn slots(&self) -> Vec<Arc<Slot>> {
        self.inner
            .platforms
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }
}

impl InboundSink for Chat {
    fn deliver(&self, inbound: Inbound) -> BoxFuture<'_, Result<Taken, NotTaken>> {
        Box::pin(async move {
            let kind = inbound.kind.word();
            self.accept(inbound).await.map_err(|e| {
                tracing::warn!(kind, error = %e, "A delivery was not stored; the platform will send it again.");
                NotTaken(e.to_string())
            })
        })
    }

    fn command(&self, inbound: Inbound) -> BoxFuture<'_, CommandReply> {
        Box::pin(async move {
            debug_assert!(matches!(inbound.kind, InboundKind::Command { .. }));
            Chat::command(self, inbound).await
        })
    }

    fn click(&self, inbound: Inbound) -> BoxFuture<'_, Result<ClickReply, NotTaken>> {
        Box::pin(async move {
            self.click_now(inbound).await.map_err(|e| {
                tracing::warn!(error = %e, "A click was not stored; the person may click again.");
                NotTaken(e.to_string())
            })
        })
    }
}
