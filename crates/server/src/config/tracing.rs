//! `[tracing]`: where spans are exported, over OTLP/HTTP (JSON).
//!
//! Invariant: without `otlp_endpoint` nothing is exported and no exporter runs; with it, the
//! endpoint is an http(s) URL (the collector's base, `/v1/traces` is added).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[tracing] service_name` by default.
pub(crate) const DEFAULT_SERVICE_NAME: &str = "workmate";

/// `[tracing]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTracing {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) otlp_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) service_name: Option<String>,
}

impl RawTracing {
    pub(crate) fn is_empty(&self) -> bool {
        self.otlp_endpoint.is_none() && self.service_name.is_none()
    }
}

/// `[tracing]`.
#[derive(Clone, Debug, Default)]
pub struct TracingConfig {
    /// `otlp_endpoint`: the OTLP/HTTP collector, e.g. `http://otel-collector:4318`.
    pub otlp_endpoint: Option<String>,
    /// `service_name`: the `service.name` of the spans (default `workmate`).
    pub service_name: String,
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_tracing(
    raw: &RawTracing,
    invalid: Invalid<'_>,
) -> Result<TracingConfig, ConfigError> {
    let otlp_endpoint = raw
        .otlp_endpoint
        .as_deref()
        .map(|e| e.trim().trim_end_matches('/').to_owned());
    if let Some(endpoint) = &otlp_endpoint {
        let ok = url::Url::parse(endpoint)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        if !ok {
            return Err(invalid(
                "tracing",
                "otlp_endpoint",
                format!("`{endpoint}` is not an http(s) URL such as http://otel-collector:4318"),
            ));
        }
    }
    let service_name = raw
        .service_name
        .clone()
        .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
    if service_name.trim().is_empty() {
        return Err(invalid("tracing", "service_name", "is empty".into()));
    }
    Ok(TracingConfig {
        otlp_endpoint,
        service_name,
    })
}

pub(crate) fn render_tracing(config: &TracingConfig) -> RawTracing {
    RawTracing {
        otlp_endpoint: config.otlp_endpoint.clone(),
        service_name: config
            .otlp_endpoint
            .as_ref()
            .map(|_| config.service_name.clone()),
    }
}
