//! The HTTP API of sessions and the inbox: `/v1/sessions…`, `/v1/inbox…`.
//!
//! Invariant: every route here runs behind the token check, and acts only within the caller's
//! tenant; identities in commands come from the token, never from the request body.

pub mod auth;
mod dto;
mod events;
mod inbox;
mod sessions;
mod usage;

use axum::Router;
use axum::middleware;
use axum::routing::{get, patch, post};

use super::AppState;
pub use auth::{Auth, Principal};

/// The authenticated API routes.
pub(crate) fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/v1/sessions", post(sessions::create))
        .route("/v1/sessions/{id}", patch(sessions::update))
        .route("/v1/sessions/{id}/commands", post(sessions::command))
        .route("/v1/sessions/{id}/messages", get(sessions::messages))
        .route("/v1/sessions/{id}/events", get(events::stream))
        .route("/v1/inbox", get(inbox::list))
        .route("/v1/inbox/{item_id}/resolve", post(inbox::resolve))
        .route("/v1/usage", get(usage::usage))
        .route_layer(middleware::from_fn_with_state(state, auth::require_token))
}
