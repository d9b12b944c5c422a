//! What this process keeps in memory: sessions' live runtimes, card pumps, and the entries of
//! every in-memory cache, by cache name.
//!
//! Invariant: the figures are read at scrape time ([`MemoryMetrics::set`]); nothing on a
//! session's or a card's path touches the registry.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Labels of a cache's entry count.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    cache: &'static str,
}

/// What is live in this process at one scrape.
#[derive(Debug, Default)]
pub struct Live {
    /// Sessions whose runtime this process holds.
    pub sessions: usize,
    /// Sessions with a running card pump, on every platform.
    pub card_pumps: usize,
    /// Entries of each in-memory cache, by cache name.
    pub caches: Vec<(&'static str, u64)>,
}

/// The memory series.
#[derive(Debug, Default)]
pub(crate) struct MemoryMetrics {
    sessions: Gauge,
    card_pumps: Gauge,
    caches: Family<CacheLabels, Gauge>,
}

impl MemoryMetrics {
    pub(crate) fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "sessions_live",
            "Sessions whose live state (runtime) this process holds; idle ones are dropped",
            metrics.sessions.clone(),
        );
        registry.register(
            "card_pumps_live",
            "Sessions with a running card pump (events to chat cards); idle ones stop",
            metrics.card_pumps.clone(),
        );
        registry.register(
            "cache_items",
            "Entries held by each in-memory cache, by cache (each has a bound: \
             docs/operations.md, Memory and caches)",
            metrics.caches.clone(),
        );
        metrics
    }

    pub(crate) fn set(&self, live: &Live) {
        let gauge = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.sessions.set(gauge(live.sessions as u64));
        self.card_pumps.set(gauge(live.card_pumps as u64));
        for (cache, items) in &live.caches {
            self.caches
                .get_or_create(&CacheLabels { cache })
                .set(gauge(*items));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_is_a_series() {
        let mut registry = Registry::with_prefix("workmate");
        let metrics = MemoryMetrics::register(&mut registry);
        metrics.set(&Live {
            sessions: 3,
            card_pumps: 2,
            caches: vec![("tenants", 1), ("card_views", 7)],
        });
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            "workmate_sessions_live 3",
            "workmate_card_pumps_live 2",
            "workmate_cache_items{cache=\"tenants\"} 1",
            "workmate_cache_items{cache=\"card_views\"} 7",
        ] {
            assert!(text.contains(line), "{line} is not in {text}");
        }
    }
}
