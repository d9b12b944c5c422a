//! `GET /sandbox` (the page) and `GET /sandbox/state` (what it polls).
//!
//! Invariant: the page is self-contained: inline CSS and JS, no external asset, so it works
//! offline and leaks nothing to a CDN.

use axum::Json;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use serde_json::Value;

use crate::AppState;

const PAGE: &str = include_str!("page.html");

pub(crate) async fn page() -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
}

pub(crate) async fn state(State(state): State<AppState>) -> Json<Value> {
    Json(state.store.snapshot())
}
