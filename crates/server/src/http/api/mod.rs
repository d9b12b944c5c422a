//! The HTTP API of sessions, the inbox, usage, automations and tenant settings: `/v1/sessions…`,
//! `/v1/inbox…`, `/v1/usage`, `/v1/automations…`, `/v1/wakes/events`, `/v1/tenant/settings` and
//! `/v1/users/…` (offboarding).
//!
//! Invariant: every route here runs behind the token check, and acts only within the caller's
//! tenant; identities in commands come from the token, never from the request body; sessions and
//! inbox items are shown only to those who may see them ([`visible`]), others get `404`.

mod audit;
pub mod auth;
mod automations;
mod dto;
mod events;
mod inbox;
mod link;
mod mcp;
pub(crate) mod pages;
mod personas;
mod sessions;
pub mod sso;
mod tenant;
mod usage;
mod users;
mod visible;

use axum::Router;
use axum::middleware;
use axum::routing::{get, patch, post};

use super::AppState;
pub use auth::{Auth, Principal, Via};
pub use link::SsoLinks;
pub use sso::Sso;

/// The authenticated API routes.
pub(crate) fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/v1/sessions", post(sessions::create).get(sessions::list))
        .route(
            "/v1/sessions/{id}",
            get(sessions::get_one).patch(sessions::update),
        )
        .route("/v1/sessions/{id}/commands", post(sessions::command))
        .route("/v1/sessions/{id}/messages", get(sessions::messages))
        .route("/v1/sessions/{id}/events", get(events::stream))
        .route("/v1/personas", get(personas::list))
        .route("/v1/personas/install", post(personas::install))
        .route("/v1/personas/{id}", post(personas::decide))
        .route("/v1/mcp/servers", get(mcp::list))
        .route(
            "/v1/mcp/servers/{name}",
            axum::routing::put(mcp::put).delete(mcp::remove),
        )
        .route("/v1/mcp/servers/{name}/tools", get(mcp::tools))
        .route("/v1/inbox", get(inbox::list))
        .route("/v1/inbox/{item_id}/resolve", post(inbox::resolve))
        .route("/v1/usage", get(usage::usage))
        .route("/v1/audit", get(audit::list))
        .route(
            "/v1/automations",
            get(automations::list).post(automations::create_one),
        )
        .route(
            "/v1/automations/{id}",
            get(automations::get_one)
                .patch(automations::update)
                .delete(automations::delete),
        )
        .route("/v1/automations/{id}/run", post(automations::run))
        .route("/v1/automations/{id}/runs", get(automations::runs))
        .route(
            "/v1/automations/{id}/rules/approve",
            post(automations::approve_rules),
        )
        .route(
            "/v1/automations/{id}/rules/deny",
            post(automations::deny_rules),
        )
        .route("/v1/wakes/events", post(automations::fire_event))
        .route(
            "/v1/tenant/settings",
            get(tenant::settings).patch(tenant::change),
        )
        .route("/v1/users/{id}", patch(users::patch))
        .route("/v1/users/{id}/deprovision", post(users::deprovision))
        .route("/v1/auth/me", get(sso::me))
        .route("/v1/auth/link", post(link::link))
        .route_layer(middleware::from_fn_with_state(state, auth::require_token))
        // Signing in and out needs no credential.
        .route("/v1/auth/login", get(sso::login))
        .route("/v1/auth/callback", get(sso::callback))
        .route("/v1/auth/logout", post(sso::logout))
        // Shows the account a link is for; sends a browser without a session to sign in first.
        .route("/v1/auth/link", get(link::show))
}
