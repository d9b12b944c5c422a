//! `GET` and `POST /v1/platforms/wecom/callback`: URL verification and encrypted callbacks, of
//! the smart robot (JSON) and the self-built app (XML).
//!
//! Invariant: a handler verifies, decrypts, decodes and hands the callback to the chat layer;
//! only a click waits for its outcome, and every answer is built from memory or the store, well
//! inside WeCom's 1 s (verification) and 5 s (callbacks).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use workmate_wecom::callback::{CallbackAuth, CallbackError, Query};
use workmate_wecom::inbound::{decode_app, decode_robot};

use super::WeComSurface;
use crate::http::{ApiError, AppState};
use crate::platforms::not_stored;
use workmate_protocol::Surface;

/// URL verification: the decrypted `echostr`, as plain text.
pub(crate) async fn verify(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let wecom = surface(&state)?;
    let query = fresh(Query::parse(query.as_deref().unwrap_or_default()).map_err(refused)?)?;
    let robot = auth(&wecom)?.verify_url(&query);
    let echo = match (robot, &wecom.app_auth) {
        (Err(CallbackError::ReceiveIdMismatch { .. }), Some(app)) => app.verify_url(&query),
        (robot, _) => robot,
    }
    .map_err(refused)?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], echo).into_response())
}

/// A callback: a message, a stream refresh or an event; answered with the sealed reply, or an
/// empty body.
pub(crate) async fn callback(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Result<Response, ApiError> {
    let wecom = surface(&state)?;
    let query = fresh(Query::parse(query.as_deref().unwrap_or_default()).map_err(refused)?)?;
    if body.trim_ascii_start().starts_with(b"<") {
        return app_callback(&wecom, &query, &body).await;
    }
    let auth = auth(&wecom)?;
    let plaintext = auth.open_json(&query, &body).map_err(refused)?;
    let callback = decode_robot(&plaintext).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let answer = workmate_wecom::dispatch_robot(
        &callback,
        &wecom.sink,
        &wecom.platform,
        &wecom.corp_id,
        None,
    )
    .await
    .map_err(|e| not_stored(Surface::Wecom, e))?;
    let Some(answer) = answer else {
        return Ok(String::new().into_response());
    };
    let timestamp = unix_now();
    let nonce = workmate_adapter::backoff::random_u64().to_string();
    let sealed = auth.seal_json(&answer.to_string(), timestamp, &nonce);
    Ok(([(header::CONTENT_TYPE, "application/json")], sealed).into_response())
}

/// A self-built app's XML callback: answered with an empty body once handled.
async fn app_callback(
    wecom: &WeComSurface,
    query: &Query,
    body: &[u8],
) -> Result<Response, ApiError> {
    let auth = wecom.app_auth.as_ref().ok_or_else(|| {
        ApiError::Missing(
            "WeCom's self-built app is not configured (set agent_id and secret, with token and \
             encoding_aes_key, in [platforms.wecom])"
                .into(),
        )
    })?;
    let plaintext = auth.open_xml(query, body).map_err(refused)?;
    let callback = decode_app(&plaintext).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    workmate_wecom::dispatch_app(&callback, &wecom.sink, &wecom.platform, &wecom.corp_id)
        .await
        .map_err(|e| not_stored(Surface::Wecom, e))?;
    Ok(String::new().into_response())
}

fn surface(state: &AppState) -> Result<Arc<WeComSurface>, ApiError> {
    state.platforms.require(Surface::Wecom)
}

/// The callback checks; a callback without them configured is refused.
fn auth(wecom: &WeComSurface) -> Result<&CallbackAuth, ApiError> {
    wecom.auth.as_ref().ok_or_else(|| {
        ApiError::Missing(
            "WeCom callbacks are not configured (token and encoding_aes_key are not set)".into(),
        )
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The query, if its timestamp is within five minutes of the clock (a replay is refused).
fn fresh(query: Query) -> Result<Query, ApiError> {
    if query.is_fresh(unix_now()) {
        return Ok(query);
    }
    Err(ApiError::BadSignature(
        "the callback's timestamp is more than 5 minutes from the clock (a replay, or the \
         server's clock is wrong)"
            .into(),
    ))
}

/// A callback that is not WeCom's, or not for this robot.
fn refused(error: CallbackError) -> ApiError {
    match error {
        CallbackError::BadQuery(_) | CallbackError::BadBody(_) | CallbackError::Decode(_) => {
            ApiError::BadRequest(error.to_string())
        }
        other => ApiError::BadSignature(other.to_string()),
    }
}
