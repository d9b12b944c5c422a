//! The HTTP surface: routes, the request-metrics layer and the shared state.
//!
//! Invariant: every response, matched or not, passes through the metrics layer exactly once, and
//! every non-2xx response is built by [`error::ApiError`] (except a chunked body found too large
//! while it is read, which gets axum's own `413`); every request is bounded by [`HttpLimits`].

pub mod api;
mod connect;
mod connections;
mod error;
mod handlers;
mod limits;
mod streams;

use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use tokio_util::sync::CancellationToken;
use workmate_engine::SessionHub;
use workmate_store::Store;

pub use connect::ConnectPages;
pub use connections::{BoundedIo, BoundedListener, ClientAddr};
pub use error::ApiError;
pub use streams::{DEFAULT_MAX_STREAMS_PER_CLIENT, StreamCaps};

use crate::config::HttpLimits;
use crate::metrics::Metrics;

/// What handlers share.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// The process's metrics.
    pub metrics: Arc<Metrics>,
    /// The sessions.
    pub hub: SessionHub,
    /// Who may call the API.
    pub auth: Arc<api::Auth>,
    /// Fires automations and wakes sessions.
    pub scheduler: workmate_engine::Scheduler,
    /// The chat layer every platform feeds.
    pub chat: workmate_chat::Chat,
    /// The configured chat platforms.
    pub platforms: crate::platforms::Platforms,
    /// Cancelled when the server stops: ends long-lived responses such as event streams.
    pub shutdown: CancellationToken,
    /// What installing a persona may reach (the operator's network policy and folder roots).
    pub personas: Arc<workmate_personas::InstallPolicy>,
    /// The event streams each client address holds open.
    pub streams: Arc<StreamCaps>,
}

/// The application's routes, with the default [`HttpLimits`].
pub fn router(state: AppState) -> Router {
    router_with(state, None, HttpLimits::default())
}

/// The application's routes and `extra` ones (the demo's sandbox), every request bounded by
/// `limits` and counted by the metrics layer.
pub fn router_with(state: AppState, extra: Option<Router>, limits: HttpLimits) -> Router {
    let metrics = Arc::clone(&state.metrics);
    let state_for_guard = state.clone();
    let app = Router::new()
        .merge(api::routes(state.clone()))
        .route("/healthz", get(handlers::healthz))
        .route("/favicon.ico", get(handlers::favicon))
        .route("/readyz", get(handlers::readyz))
        .route("/metrics", get(handlers::metrics))
        .route("/v1/contract", get(handlers::contract))
        .route("/admin", get(api::pages::admin))
        .merge(state.platforms.routes())
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .with_state(state);
    let app = match extra {
        Some(extra) => app.merge(extra.layer(middleware::from_fn_with_state(
            state_for_guard,
            api::pages::guard_sandbox,
        ))),
        None => app,
    };
    limits::bound_requests(app, limits)
        .layer(middleware::from_fn(handlers::security_headers))
        .layer(middleware::from_fn_with_state(metrics, track))
}

/// Records the method, matched route template, status and duration of every request.
async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    let span = tracing::info_span!(
        "http.request",
        http.method = %method,
        http.route = route.as_deref().unwrap_or(crate::metrics::UNMATCHED_ROUTE),
    );
    let response = next.run(request).instrument(span).await;
    metrics.observe_request(
        method.as_str(),
        route.as_deref(),
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}
