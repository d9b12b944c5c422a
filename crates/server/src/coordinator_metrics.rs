//! The coordinator's series: events handed to and received from other replicas, events that
//! could not be handed over, sessions followed, and calls answered alone while Redis was away.
//!
//! Invariant: the figures are read from the coordinator at scrape time (counters advance by
//! what changed since the last scrape), so nothing on the events' path touches the registry.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use workmate_coordinator::{Coordinator, Stats};

/// The coordinator's series.
#[derive(Debug, Default)]
pub(crate) struct CoordinatorMetrics {
    source: OnceLock<Arc<dyn Coordinator>>,
    seen: Mutex<Stats>,
    published: Counter,
    received: Counter,
    dropped: Counter,
    fallbacks: Counter,
    subscribed: Gauge,
    shared: Gauge,
}

impl CoordinatorMetrics {
    pub(crate) fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "coordinator_shared",
            "1 when replicas share a coordinator (Redis), 0 in process",
            metrics.shared.clone(),
        );
        registry.register(
            "coordinator_events_published",
            "Live events handed to the other replicas",
            metrics.published.clone(),
        );
        registry.register(
            "coordinator_events_received",
            "Live events received from the other replicas",
            metrics.received.clone(),
        );
        registry.register(
            "coordinator_events_dropped",
            "Live events that could not be handed over (subscribers replay them from the store)",
            metrics.dropped.clone(),
        );
        registry.register(
            "coordinator_fallbacks",
            "Coordinator calls answered by this replica alone because Redis did not answer",
            metrics.fallbacks.clone(),
        );
        registry.register(
            "coordinator_sessions_followed",
            "Sessions this replica follows for other replicas' events",
            metrics.subscribed.clone(),
        );
        metrics
    }

    /// Reads `coordinator` at every scrape from now on (the first one installed stays).
    pub(crate) fn watch(&self, coordinator: &Arc<dyn Coordinator>) {
        let _ = self.source.set(Arc::clone(coordinator));
    }

    /// Brings the series up to the coordinator's figures.
    pub(crate) fn refresh(&self) {
        let Some(source) = self.source.get() else {
            return;
        };
        self.shared.set(i64::from(source.is_shared()));
        let now = source.stats();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        self.published
            .inc_by(now.events_published.saturating_sub(seen.events_published));
        self.received
            .inc_by(now.events_received.saturating_sub(seen.events_received));
        self.dropped
            .inc_by(now.events_dropped.saturating_sub(seen.events_dropped));
        self.fallbacks
            .inc_by(now.fallbacks.saturating_sub(seen.fallbacks));
        self.subscribed
            .set(i64::try_from(now.sessions_subscribed).unwrap_or(i64::MAX));
        *seen = now;
    }
}
