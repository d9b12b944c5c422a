//! Route handlers: probes, metrics and the published contract.
//!
//! Invariant: `/healthz` depends on nothing but the process; `/readyz` answers within
//! [`READY_TIMEOUT`] whatever the database does.

use std::sync::OnceLock;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{Method, Uri, header};
use axum::response::IntoResponse;
use serde_json::{Value, json};

use super::{ApiError, AppState};
use crate::metrics;

/// Longest a readiness probe waits for the database.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// workmate's icon: a speech bubble, drawn in SVG so nothing is fetched and no font is needed.
const FAVICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 32 32\">\
<rect x=\"2\" y=\"4\" width=\"28\" height=\"20\" rx=\"6\" fill=\"#2f6fde\"/>\
<path d=\"M9 24 L9 30 L16 24 Z\" fill=\"#2f6fde\"/>\
<circle cx=\"10\" cy=\"14\" r=\"2.2\" fill=\"#fff\"/><circle cx=\"16\" cy=\"14\" r=\"2.2\" fill=\"#fff\"/>\
<circle cx=\"22\" cy=\"14\" r=\"2.2\" fill=\"#fff\"/></svg>";

/// `GET /favicon.ico`: the icon browsers ask for on every page (answered, so it is no 404 in
/// the logs); an SVG, which browsers take whatever the name says.
pub(crate) async fn favicon() -> impl axum::response::IntoResponse {
    (
        [
            (axum::http::header::CONTENT_TYPE, "image/svg+xml"),
            (axum::http::header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        FAVICON,
    )
}

/// `GET /healthz`: the process is alive.
pub(crate) async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// `GET /readyz`: the process can serve, i.e. it is not draining and the database answers.
pub(crate) async fn readyz(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    // A draining replica answers requests already on an open connection, but takes no new
    // work: the load balancer must move on.
    if state.shutdown.is_cancelled() {
        return Err(ApiError::NotReady {
            reason: "draining: this replica is stopping".into(),
        });
    }
    match tokio::time::timeout(READY_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => Ok(Json(json!({ "status": "ready" }))),
        // The probe is unauthenticated: the database's own words (hosts, users) go to the log.
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "The database does not answer the readiness probe.");
            Err(ApiError::NotReady {
                reason: "database: unreachable (the server's log says why)".into(),
            })
        }
        Err(_) => Err(ApiError::NotReady {
            reason: format!("database: no answer within {} s", READY_TIMEOUT.as_secs()),
        }),
    }
}

/// `GET /metrics`: Prometheus/OpenMetrics text.
pub(crate) async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    state
        .metrics
        .set_runs_in_progress(state.scheduler.running());
    let mut caches = vec![("histories", state.hub.hot_histories())];
    caches.extend(state.store.cached_items());
    caches.extend(state.chat.cached_items());
    state.metrics.set_live(&crate::memory_metrics::Live {
        sessions: state.hub.live_sessions(),
        card_pumps: state.chat.active_pumps(),
        caches,
    });
    // Read before the intake query below takes a connection of its own.
    let pool = state.store.pool_stats();
    match state.store.intake().unfinished().await {
        Ok(unfinished) => state.metrics.set_intake(unfinished, state.chat.in_flight()),
        Err(e) => tracing::warn!(error = %e, "Cannot count unfinished chat deliveries."),
    }
    let text = state
        .metrics
        .render(pool)
        .map_err(|e| ApiError::Internal(format!("encoding metrics: {e}")))?;
    Ok(([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text))
}

/// `GET /v1/contract`: the JSON schemas of the Event and Command types this build speaks.
pub(crate) async fn contract() -> Json<Value> {
    static CONTRACT: OnceLock<Value> = OnceLock::new();
    Json(
        CONTRACT
            .get_or_init(|| {
                json!({
                    "version": env!("CARGO_PKG_VERSION"),
                    "event": workmate_protocol::event_schema(),
                    "command": workmate_protocol::command_schema(),
                })
            })
            .clone(),
    )
}

/// Any path no route matches.
pub(crate) async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

/// A known path with a method it does not accept.
pub(crate) async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

/// Headers on every answer: no other site may frame workmate's pages, browsers take the content
/// type as sent, and no page's address (which may carry a link token) leaks as a referrer.
pub(crate) async fn security_headers(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
