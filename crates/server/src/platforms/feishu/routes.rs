//! `POST /v1/platforms/feishu/events` and `POST /v1/platforms/feishu/card`.
//!
//! Invariant: a handler verifies, decrypts, decodes and hands the delivery to the chat layer;
//! only a click waits for its outcome (it must be answered with it), and that answer is built
//! from what is stored, well inside Feishu's 3 s.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use workmate_feishu::webhook::{Signed, WebhookAuth};

/// What every refused request is told, whichever check it failed.
const REFUSED: &str = "the request could not be verified (signature, timestamp, encryption or \
                       verification token)";

use super::FeishuSurface;
use crate::http::{ApiError, AppState};
use crate::platforms::{header, not_stored};
use workmate_protocol::Surface;

/// Events: messages, bot-menu clicks, the URL handshake (and card callbacks, when the app sends
/// them here).
pub(crate) async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    handle(&state, &headers, &body).await
}

/// Card callbacks (`card.action.trigger`, and the legacy card request URL).
pub(crate) async fn card(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    handle(&state, &headers, &body).await
}

async fn handle(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
    let feishu: Arc<FeishuSurface> = state.platforms.require(Surface::Feishu)?;
    let header = |name: &str| header(headers, name);
    let signed = Signed {
        timestamp: header("x-lark-request-timestamp"),
        nonce: header("x-lark-request-nonce"),
        signature: header("x-lark-signature"),
    };
    let mut plaintext = String::new();
    let envelope = feishu
        .auth
        .open(signed, body, &mut plaintext)
        .map_err(|e| {
            if WebhookAuth::is_refusal(&e) {
                // One answer for every refusal: which check failed stays in the log.
                tracing::warn!(error = %e, "Refused a Feishu request.");
                ApiError::BadSignature(REFUSED.into())
            } else {
                ApiError::BadRequest(e.to_string())
            }
        })?;
    let answer = workmate_feishu::dispatch(envelope, &feishu.sink, &feishu.platform, feishu.bot())
        .await
        .map_err(|e| not_stored(Surface::Feishu, e))?;
    Ok(Json(answer).into_response())
}
