//! `POST /v1/platforms/slack/events` and `POST /v1/platforms/slack/interactions`.
//!
//! Invariant: a handler verifies, decodes and queues; it never waits on the engine or on Slack,
//! so its answer is well inside Slack's 3 s.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tracing::debug;
use workmate_slack::{
    Event, EventCallback, EventEnvelope, Interaction, decode_event_envelope, decode_interaction,
};

use super::SlackSurface;
use crate::http::{ApiError, AppState};

pub(super) fn configured(state: &AppState) -> Result<Arc<SlackSurface>, ApiError> {
    state
        .slack
        .clone()
        .ok_or_else(|| ApiError::Missing("Slack is not configured".into()))
}

pub(super) fn verified(
    slack: &SlackSurface,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), ApiError> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    slack
        .verify(
            &header("x-slack-request-timestamp"),
            &header("x-slack-signature"),
            body,
        )
        .map_err(ApiError::BadSignature)
}

fn queue_full() -> ApiError {
    ApiError::NotReady {
        reason: "Slack work queue full".into(),
    }
}

/// The Events API.
pub(crate) async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let slack = configured(&state)?;
    verified(&slack, &headers, &body)?;
    let envelope = decode_event_envelope(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    match envelope {
        EventEnvelope::UrlVerification { challenge } => {
            Ok(Json(json!({ "challenge": challenge })).into_response())
        }
        EventEnvelope::EventCallback(callback) => {
            slack.accept_event(*callback)?;
            Ok(StatusCode::OK.into_response())
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
    let slack = configured(&state)?;
    verified(&slack, &headers, &body)?;
    let interaction = decode_interaction(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    slack.accept_interaction(interaction)?;
    Ok(StatusCode::OK.into_response())
}

impl SlackSurface {
    /// Queues the work an Events API callback asks for (HTTP and Socket Mode alike): messages
    /// to the bot become turns, everything else is ignored. `Err` when the queue is full.
    pub(super) fn accept_event(self: &Arc<Self>, callback: EventCallback) -> Result<(), ApiError> {
        let message = match callback.event {
            Event::AppMention(message) => message,
            Event::Message(message) if message.is_direct_message() => message,
            _ => return Ok(()),
        };
        let (Some(team), Some(event_id)) = (callback.team_id, callback.event_id) else {
            debug!("Slack event without team_id or event_id; ignored.");
            return Ok(());
        };
        if !message.is_user_post() || message.channel.is_none() {
            return Ok(());
        }
        let job = Arc::clone(self).message_job(team, event_id, message);
        self.queue.try_submit(job).map_err(|_| queue_full())
    }

    /// Queues the work an interaction asks for: button clicks resolve; the rest is ignored.
    pub(super) fn accept_interaction(
        self: &Arc<Self>,
        interaction: Interaction,
    ) -> Result<(), ApiError> {
        let Interaction::BlockActions(actions) = interaction else {
            return Ok(());
        };
        let job = Arc::clone(self).click_job(*actions);
        self.queue.try_submit(job).map_err(|_| queue_full())
    }
}
