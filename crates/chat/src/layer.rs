//! The composition root: [`Chat`]'s public operations — building the layer, registering
//! platforms, attaching what commands need, taking deliveries and shutting down.
//!
//! Invariants: platforms are registered before their deliveries are accepted; each registered
//! platform has one coalescer and one set of card pumps; on shutdown no new delivery is taken,
//! the deliveries already running finish, then pumps stop and pending card updates are sent for
//! at most the grace period. This module depends on the features it wires together; no feature
//! depends on it.

use std::sync::Arc;
use std::time::Duration;

use workmate_adapter::{
    BoxFuture, ClickReply, Coalescer, CommandReply, Inbound, InboundKind, InboundSink, NotTaken,
    Platform, Taken,
};
use workmate_engine::{Scheduler, SessionHub};
use workmate_store::Store;

use crate::cards_store::StoreCards;
use crate::config::{ChatConfig, IntakeObserver, PlatformSettings};
use crate::connect_links::ConnectLinks;
use crate::error::Result;
use crate::handle::{Chat, Slot};
use crate::jobs::DeliveryJobs;
use crate::pump::Pumps;

impl Chat {
    /// The chat layer over `hub`, storing deliveries in `store`. Register the platforms, then
    /// [`Chat::start`] the workers.
    pub fn new(hub: SessionHub, store: Store, config: ChatConfig) -> Self {
        let chat = Self::empty(hub, store, config);
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
        crate::intake::workers::start(self, Arc::new(DeliveryJobs(self.clone())));
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
        self.install(surface, slot);
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
        links: Arc<dyn ConnectLinks>,
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
            tracing::Instrument::instrument(crate::intake::table::accept(self, &inbound), span)
                .await;
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
