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
        Self {
            registry,
            requests,
            durations,
            pool_connections,
            pool_idle,
        }
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
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
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
        assert!(
            text.contains("workmate_db_pool_idle_connections 2"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
