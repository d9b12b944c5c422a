//! `POST /v1/platforms/slack/{events,interactions,commands}`.
//!
//! Invariant: a handler verifies, decodes, maps and stores; it never waits on the engine, so its
//! answer is well inside Slack's 3 s. What could not be stored is answered 503, so Slack
//! delivers it again; what was stored before (a redelivery) is answered 200 and not applied.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use workmate_adapter::Inbound;
use workmate_slack::mapping::{click_inbounds, command_inbound, command_reply, event_inbound};
use workmate_slack::{
    EventEnvelope, Interaction, decode_event_envelope, decode_interaction, decode_slash_command,
};

use super::SlackSurface;
use crate::http::{ApiError, AppState};
use crate::platforms::{header, not_stored};
use workmate_protocol::Surface;

/// The Slack surface, once the request's signature checked out.
fn verified(
    state: &AppState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Arc<SlackSurface>, ApiError> {
    let slack = state.platforms.require::<SlackSurface>(Surface::Slack)?;
    let header = |name: &str| header(headers, name);
    slack
        .verify(
            header("x-slack-request-timestamp"),
            header("x-slack-signature"),
            body,
        )
        .map_err(ApiError::BadSignature)?;
    Ok(slack)
}

/// Stores every delivery of one request; a failure leaves the rest to Slack's redelivery.
async fn store_all(slack: &SlackSurface, inbounds: Vec<Inbound>) -> Result<Response, ApiError> {
    for inbound in inbounds {
        slack
            .chat
            .accept(inbound)
            .await
            .map_err(|e| not_stored(Surface::Slack, e))?;
    }
    Ok(StatusCode::OK.into_response())
}

/// The Events API.
pub(crate) async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let slack = verified(&state, &headers, &body)?;
    let envelope = decode_event_envelope(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    match envelope {
        EventEnvelope::UrlVerification { challenge } => {
            Ok(Json(json!({ "challenge": challenge })).into_response())
        }
        EventEnvelope::EventCallback(callback) => {
            let bot = slack.platform.known_bot().map(|b| b.user_id.as_str());
            store_all(&slack, event_inbound(*callback, bot).into_iter().collect()).await
        }
        _ => Ok(StatusCode::OK.into_response()),
    }
}

/// Interactivity: button clicks.
pub(crate) async fn interactions(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let slack = verified(&state, &headers, &body)?;
    let interaction = decode_interaction(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    match interaction {
        Interaction::BlockActions(actions) => store_all(&slack, click_inbounds(&actions)).await,
        _ => Ok(StatusCode::OK.into_response()),
    }
}

/// The `/workmate` slash command: its reply is the response, seen only by the caller.
pub(crate) async fn slash_commands(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let slack = verified(&state, &headers, &body)?;
    let command = decode_slash_command(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let reply = slack.chat.command(command_inbound(&command)).await;
    Ok(Json(command_reply(&reply)).into_response())
}
