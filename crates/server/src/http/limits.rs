//! Bounds on what one request can hold of the server: the time until its response starts, and
//! the size of its body (what a connection can hold is bounded in [`super::connections`]).
//!
//! Invariants: a request whose response has not started within `request_timeout` gets `408`,
//! which covers a slowly sent body because handlers read bodies before answering; a streamed
//! response body (the SSE event streams) is never cut, since the deadline ends when the response
//! head is ready; a body over `max_body_bytes` gets `413`.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use super::ApiError;
use crate::config::HttpLimits;

/// The request bounds (timeout and body size) around every route of `router`.
pub(crate) fn bound_requests(router: Router, limits: HttpLimits) -> Router {
    router
        .layer(middleware::from_fn_with_state(limits, bound_request))
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
}

async fn bound_request(State(limits): State<HttpLimits>, request: Request, next: Next) -> Response {
    // A declared length over the limit is refused before anything is read; a chunked body is cut
    // by the extractors at the same limit (their own 413).
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return ApiError::TooLarge {
            limit: limits.max_body_bytes,
        }
        .into_response();
    }
    match tokio::time::timeout(limits.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::TimedOut {
            ms: limits.request_timeout.as_millis(),
        }
        .into_response(),
    }
}
