//! Prometheus metrics of the process.
//!
//! Invariant: label values come from bounded sets (the matched route template or "unmatched", a
//! fixed list of methods or "other", the status code), so a client cannot grow the series count
//! by requesting random paths; pool gauges are read from the store at scrape time, never cached.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// The content type of [`Metrics::render`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The route label of requests no route matched.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Labels of one HTTP series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    method: &'static str,
    route: String,
    status: u16,
}

/// Labels of a turn recovery took up.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RecoveryLabels {
    outcome: &'static str,
}

/// Labels of a scheduler tick.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TickLabels {
    outcome: &'static str,
}

/// Labels of a delivery a platform handed over.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    platform: &'static str,
    outcome: &'static str,
}

/// Labels of a delivery's acknowledgement time.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlatformLabels {
    platform: &'static str,
}

/// Labels of a callback refused before it reached the chat layer.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabels {
    platform: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
}

type HistogramFamily = Family<HttpLabels, Histogram, fn() -> Histogram>;

/// The registry and the handles the server updates.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<HttpLabels, Counter>,
    durations: HistogramFamily,
    pool_connections: Gauge,
    pool_idle: Gauge,
    intake_unfinished: Gauge,
    intake_in_flight: Gauge,
    memory: crate::memory_metrics::MemoryMetrics,
    recovered: Family<RecoveryLabels, Counter>,
    scheduler: SchedulerMetrics,
    engine: std::sync::Arc<crate::engine_metrics::EngineMetrics>,
    deliveries: Family<DeliveryLabels, Counter>,
    delivery_ack: Family<PlatformLabels, Histogram, fn() -> Histogram>,
    refused: Family<RefusedLabels, Counter>,
    coordinator: crate::coordinator_metrics::CoordinatorMetrics,
}

/// What the scheduler's ticks did, summed.
#[derive(Debug)]
struct SchedulerMetrics {
    ticks: Family<TickLabels, Counter>,
    tick_duration: Histogram,
    fired: Counter,
    lost: Counter,
    adopted: Counter,
    woken: Counter,
    running: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("workmate");
        let build_info = Family::<BuildLabels, Gauge>::default();
        build_info
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        registry.register("build_info", "The running build; always 1", build_info);

        let requests = Family::<HttpLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let durations: HistogramFamily = Family::new_with_constructor(|| {
            // 1 ms to ~16 s.
            Histogram::new(exponential_buckets(0.001, 2.0, 15))
        });
        registry.register_with_unit(
            "http_request_duration",
            "Time from receiving a request to producing its response",
            Unit::Seconds,
            durations.clone(),
        );

        let pool_connections = Gauge::default();
        registry.register(
            "db_pool_connections",
            "Database connections open in the pool",
            pool_connections.clone(),
        );
        let pool_idle = Gauge::default();
        registry.register(
            "db_pool_idle_connections",
            "Open database connections not in use",
            pool_idle.clone(),
        );
        let intake_unfinished = Gauge::default();
        registry.register(
            "intake_unfinished",
            "Chat deliveries stored and not yet finished, on every replica (pending or running)",
            intake_unfinished.clone(),
        );
        let intake_in_flight = Gauge::default();
        registry.register(
            "intake_in_flight",
            "Chat deliveries this process is running now",
            intake_in_flight.clone(),
        );
        let recovered = Family::<RecoveryLabels, Counter>::default();
        registry.register(
            "turns_recovered",
            "Turns a crash cut short that this process took up, by how they were finished \
             (resumed, continued, retried, completed, ended)",
            recovered.clone(),
        );
        let scheduler = SchedulerMetrics::register(&mut registry);
        let engine = std::sync::Arc::new(crate::engine_metrics::EngineMetrics::register(
            &mut registry,
        ));
        let deliveries = Family::<DeliveryLabels, Counter>::default();
        registry.register(
            "deliveries",
            "Chat deliveries platforms handed over (webhooks and long connections), by platform \
             and outcome (stored, duplicate, not_stored: the platform sends it again)",
            deliveries.clone(),
        );
        let delivery_ack: Family<PlatformLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.0005, 2.0, 14)));
        registry.register_with_unit(
            "delivery_ack",
            "From a delivery handed over to its acknowledgement (stored or refused), by platform",
            Unit::Seconds,
            delivery_ack.clone(),
        );
        let refused = Family::<RefusedLabels, Counter>::default();
        registry.register(
            "callbacks_refused",
            "Platform callbacks refused before they reached the chat layer, by platform and \
             reason (stale, replayed, bad_signature)",
            refused.clone(),
        );
        let coordinator = crate::coordinator_metrics::CoordinatorMetrics::register(&mut registry);
        let memory = crate::memory_metrics::MemoryMetrics::register(&mut registry);
        Self {
            coordinator,
            registry,
            requests,
            durations,
            pool_connections,
            pool_idle,
            intake_unfinished,
            intake_in_flight,
            memory,
            recovered,
            scheduler,
            engine,
            deliveries,
            delivery_ack,
            refused,
        }
    }

    /// Counts a platform callback refused for `reason` (a fixed word).
    pub fn callback_refused(&self, platform: &'static str, reason: &'static str) {
        self.refused
            .get_or_create(&RefusedLabels { platform, reason })
            .inc();
    }

    /// The engine's series, as the observer to install on the hub
    /// ([`workmate_engine::SessionHub::observe`]).
    pub fn engine(&self) -> std::sync::Arc<crate::engine_metrics::EngineMetrics> {
        std::sync::Arc::clone(&self.engine)
    }

    /// Sets the memory gauges: live sessions, card pumps and cache entries.
    pub fn set_live(&self, live: &crate::memory_metrics::Live) {
        self.memory.set(live);
    }

    /// Reads the coordinator's figures at every scrape from now on.
    pub fn watch_coordinator(
        &self,
        coordinator: &std::sync::Arc<dyn workmate_coordinator::Coordinator>,
    ) {
        self.coordinator.watch(coordinator);
    }

    /// Counts a turn recovery took up; `outcome` is one of the engine's fixed names.
    pub fn turn_recovered(&self, outcome: &'static str) {
        self.recovered
            .get_or_create(&RecoveryLabels { outcome })
            .inc();
    }

    /// Sets the number of automation runs this process drives (read at scrape time).
    pub fn set_runs_in_progress(&self, running: usize) {
        self.scheduler
            .running
            .set(i64::try_from(running).unwrap_or(i64::MAX));
    }

    /// Sets the intake gauges (read at scrape time): deliveries unfinished in the table, and
    /// those this process runs.
    pub fn set_intake(&self, unfinished: i64, in_flight: usize) {
        self.intake_unfinished.set(unfinished);
        self.intake_in_flight
            .set(i64::try_from(in_flight).unwrap_or(i64::MAX));
    }

    /// Counts one answered request. `route` is the matched route template, if any.
    pub fn observe_request(
        &self,
        method: &str,
        route: Option<&str>,
        status: u16,
        elapsed: Duration,
    ) {
        let labels = HttpLabels {
            method: bounded_method(method),
            route: route.unwrap_or(UNMATCHED_ROUTE).to_owned(),
            status,
        };
        self.requests.get_or_create(&labels).inc();
        self.durations
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// The OpenMetrics text exposition, with the pool gauges set from `(open, idle)` first.
    pub fn render(&self, pool: (u32, usize)) -> Result<String, std::fmt::Error> {
        self.pool_connections.set(i64::from(pool.0));
        self.pool_idle
            .set(i64::try_from(pool.1).unwrap_or(i64::MAX));
        self.coordinator.refresh();
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

impl SchedulerMetrics {
    fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            ticks: Family::default(),
            // 1 ms to ~16 s.
            tick_duration: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
            fired: Counter::default(),
            lost: Counter::default(),
            adopted: Counter::default(),
            woken: Counter::default(),
            running: Gauge::default(),
        };
        registry.register(
            "scheduler_ticks",
            "Scheduler ticks, by outcome (ok or failed)",
            metrics.ticks.clone(),
        );
        registry.register_with_unit(
            "scheduler_tick_duration",
            "Time one scheduler tick took (claiming, adopting, waking; not the runs)",
            Unit::Seconds,
            metrics.tick_duration.clone(),
        );
        registry.register(
            "scheduler_runs_fired",
            "Automation runs this process claimed and started",
            metrics.fired.clone(),
        );
        registry.register(
            "scheduler_claims_lost",
            "Due automations another process claimed first",
            metrics.lost.clone(),
        );
        registry.register(
            "scheduler_runs_adopted",
            "Runs of stopped processes this process took over",
            metrics.adopted.clone(),
        );
        registry.register(
            "scheduler_wakes_delivered",
            "Self-wakes delivered to their sessions",
            metrics.woken.clone(),
        );
        registry.register(
            "scheduler_runs_in_progress",
            "Automation runs this process drives now",
            metrics.running.clone(),
        );
        metrics
    }
}

impl workmate_engine::TickObserver for Metrics {
    fn tick_finished(&self, report: Option<&workmate_engine::TickReport>, took: Duration) {
        let scheduler = &self.scheduler;
        scheduler.tick_duration.observe(took.as_secs_f64());
        let outcome = if report.is_some() { "ok" } else { "failed" };
        scheduler.ticks.get_or_create(&TickLabels { outcome }).inc();
        if let Some(report) = report {
            let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
            scheduler.fired.inc_by(count(report.fired));
            scheduler.lost.inc_by(count(report.lost));
            scheduler.adopted.inc_by(count(report.adopted));
            scheduler.woken.inc_by(count(report.woken));
        }
    }
}

fn bounded_method(method: &str) -> &'static str {
    const KNOWN: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    KNOWN
        .iter()
        .copied()
        .find(|m| *m == method)
        .unwrap_or("other")
}

impl workmate_chat::IntakeObserver for Metrics {
    fn delivery(
        &self,
        platform: workmate_protocol::Surface,
        outcome: &'static str,
        elapsed: Duration,
    ) {
        let platform = platform.as_str();
        self.deliveries
            .get_or_create(&DeliveryLabels { platform, outcome })
            .inc();
        self.delivery_ack
            .get_or_create(&PlatformLabels { platform })
            .observe(elapsed.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family() {
        let metrics = Metrics::new();
        metrics.observe_request("BREW", None, 404, Duration::from_millis(3));
        let text = metrics.render((3, 2)).unwrap();
        assert!(text.contains("workmate_build_info{version=\""), "{text}");
        assert!(
            text.contains(
                r#"workmate_http_requests_total{method="other",route="unmatched",status="404"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains("workmate_http_request_duration_seconds_bucket{"),
            "{text}"
        );
        assert!(text.contains("workmate_db_pool_connections 3"), "{text}");
        use workmate_engine::TickObserver as _;
        let report = workmate_engine::TickReport {
            fired: 3,
            ..Default::default()
        };
        metrics.tick_finished(Some(&report), Duration::from_millis(12));
        metrics.tick_finished(None, Duration::from_millis(1));
        metrics.set_runs_in_progress(2);
        metrics.set_intake(7, 4);
        let text = metrics.render((3, 2)).unwrap();
        for line in [
            r#"workmate_scheduler_ticks_total{outcome="ok"} 1"#,
            r#"workmate_scheduler_ticks_total{outcome="failed"} 1"#,
            "workmate_scheduler_runs_fired_total 3",
            "workmate_scheduler_runs_in_progress 2",
            "workmate_scheduler_tick_duration_seconds_count 2",
            "workmate_intake_unfinished 7",
            "workmate_intake_in_flight 4",
        ] {
            assert!(text.contains(line), "{line} missing from {text}");
        }
        assert!(
            text.contains("workmate_db_pool_idle_connections 2"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
