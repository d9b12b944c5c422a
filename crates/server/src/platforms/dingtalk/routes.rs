//! `POST /v1/platforms/dingtalk/{robot,card,events}`: HTTP mode's robot and card callbacks, and
//! the encrypted event push.
//!
//! Invariant: a handler verifies the request before anything reaches the chat layer, then does
//! what the Stream connection does with the same delivery (`workmate_dingtalk::dispatch`); only
//! a click waits for its outcome, and its answer is built from what is stored, well inside
//! DingTalk's 2 s.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use secrecy::ExposeSecret;
use serde_json::{Value, json};
use workmate_dingtalk::{dispatch, sign};
use workmate_wxcrypto::{Crypto, CryptoError};

use super::DingTalkSurface;
use crate::config::DingTalkMode;
use crate::http::{ApiError, AppState};
use crate::platforms::{header, not_stored};
use workmate_protocol::Surface;

/// Where card callbacks' used signature pairs are remembered (not a tenant: a click's tenant
/// is known only from its unsigned body).
const REPLAY_SCOPE: &str = "platform:dingtalk";

/// The plaintext the event push is answered with, encrypted.
const SUCCESS: &str = "success";

/// The robot's outgoing callback: a message for the robot, signed with `timestamp` and `sign`.
pub(crate) async fn robot(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let dingtalk = http_mode(&state)?;
    let header = |name| header(&headers, name);
    sign::verify_callback(
        dingtalk.client_secret.expose_secret(),
        header("timestamp"),
        header("sign"),
        now_ms(),
    )
    .map_err(|e| ApiError::BadSignature(e.to_string()))?;
    let body = text(&body)?;
    refuse_other_corp(&state, &dingtalk, body, "chatbotCorpId")?;
    // The signature covers only the timestamp: a pair carries one message. DingTalk sending the
    // same message again (same `msgId`) is a redelivery; another body under a used pair is a
    // replay of captured headers.
    let message_id: String = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["msgId"].as_str().map(|id| id.chars().take(32).collect()))
        .unwrap_or_default();
    let pair: String = format!("{}:{}", header("timestamp"), header("sign"))
        .chars()
        .take(64)
        .collect();
    let scope = workmate_protocol::TenantId::from(REPLAY_SCOPE);
    let spent = state.store.spent_links();
    forget_old_pairs(&state).await;
    let first = spent
        .spend(&scope, &pair, &message_id)
        .await
        .map_err(not_checked)?;
    if !first {
        let same = spent.spent_for(&scope, &pair).await.map_err(not_checked)?;
        if same.as_deref() != Some(message_id.as_str()) || message_id.is_empty() {
            state.metrics.callback_refused("dingtalk", "replayed");
            return Err(ApiError::BadSignature(
                "this robot callback's signature came with another message already (a replay)"
                    .into(),
            ));
        }
    }
    let answer = dispatch::robot_message(body, dingtalk.sink.as_ref())
        .await
        .map_err(|e| not_stored(Surface::Dingtalk, e))?;
    Ok(Json(answer).into_response())
}

/// A card callback (a button of an approval card posted with this route's `callbackRouteKey`),
/// signed with `x-ddpaas-signature-timestamp` and `x-ddpaas-signature`; answered with the
/// clicker's card data.
pub(crate) async fn card(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let dingtalk = http_mode(&state)?;
    let (timestamp, signature) = (
        header(&headers, "x-ddpaas-signature-timestamp"),
        header(&headers, "x-ddpaas-signature"),
    );
    let secret = dingtalk.client_secret.expose_secret();
    if let Err(e) = sign::verify_card_callback_at(secret, timestamp, signature, now_ms()) {
        let reason = match e {
            sign::SignError::Stale { .. } => "stale",
            _ => "bad_signature",
        };
        state.metrics.callback_refused("dingtalk", reason);
        return Err(ApiError::BadSignature(e.to_string()));
    }
    // The signature covers only the timestamp: one pair is one click, never two.
    forget_old_pairs(&state).await;
    let pair: String = format!("{timestamp}:{signature}")
        .chars()
        .take(64)
        .collect();
    let first_use = state
        .store
        .spent_links()
        .spend(
            &workmate_protocol::TenantId::from(REPLAY_SCOPE),
            &pair,
            "card_callback",
        )
        .await
        .map_err(not_checked)?;
    if !first_use {
        state.metrics.callback_refused("dingtalk", "replayed");
        return Err(ApiError::BadSignature(
            "this card callback's signature was used already (a replay)".into(),
        ));
    }
    let body = text(&body)?;
    refuse_other_corp(&state, &dingtalk, body, "corpId")?;
    // Nor the clicker: only the key in that person's own private data of the card names them.
    if let Some(keys) = &dingtalk.click_keys {
        let callback: Value = serde_json::from_str(body)
            .map_err(|e| ApiError::BadRequest(format!("the card callback is not JSON: {e}")))?;
        if let Err(refusal) = keys.check(&callback) {
            state.metrics.callback_refused("dingtalk", refusal.as_str());
            return Err(ApiError::Forbidden(refusal.to_string()));
        }
    }
    let answer = dispatch::card_callback(body, None, dingtalk.sink.as_ref())
        .await
        .map_err(|e| not_stored(Surface::Dingtalk, e))?;
    Ok(Json(answer).into_response())
}

/// The encrypted event push (`msg_signature`, `timestamp`, `nonce` in the query, `{"encrypt"}`
/// in the body), the URL check (`check_url`) included; answered with `"success"` encrypted.
/// Events are acknowledged and not acted on, as over the Stream connection.
pub(crate) async fn events(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Result<Response, ApiError> {
    let dingtalk = surface(&state)?;
    let crypto = dingtalk.events.as_ref().ok_or_else(|| {
        ApiError::Missing(
            "the DingTalk event push is not configured (set token and encoding_aes_key in \
             [platforms.dingtalk])"
                .into(),
        )
    })?;
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(query.as_deref().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let param = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let signature = param("msg_signature")
        .or_else(|| param("signature"))
        .unwrap_or_default();
    let timestamp = param("timestamp").unwrap_or_default();
    let nonce = param("nonce").unwrap_or_default();
    let sealed: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the event push is not JSON: {e}")))?;
    let encrypt = sealed["encrypt"]
        .as_str()
        .ok_or_else(|| ApiError::BadRequest("the event push has no `encrypt`".into()))?;
    let plaintext = crypto
        .decrypt(signature, timestamp, nonce, encrypt)
        .map_err(refused)?;
    let event: Value = serde_json::from_str(&plaintext)
        .map_err(|e| ApiError::BadRequest(format!("the decrypted event is not JSON: {e}")))?;
    let event_type = event["EventType"].as_str().unwrap_or_default();
    if event_type == "check_url" {
        tracing::info!("DingTalk checked the event push URL.");
    } else {
        tracing::debug!(event_type, "A DingTalk event, acknowledged.");
    }
    Ok(Json(seal(crypto, SUCCESS)).into_response())
}

/// Refuses a callback whose body names another organisation (`field`) than the configured
/// `corp_id`; with none configured, every organisation is served.
fn refuse_other_corp(
    state: &AppState,
    dingtalk: &DingTalkSurface,
    body: &str,
    field: &str,
) -> Result<(), ApiError> {
    let Some(corp) = &dingtalk.corp_id else {
        return Ok(());
    };
    let named = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v[field].as_str().map(str::to_owned));
    if named.as_deref() == Some(corp.as_str()) {
        return Ok(());
    }
    state.metrics.callback_refused("dingtalk", "other_corp");
    Err(ApiError::Forbidden(format!(
        "this callback's {field} is not the organisation this app serves ([platforms.dingtalk] \
         corp_id)"
    )))
}

/// Now and then (one callback in a hundred), forgets signature pairs older than any window they
/// could be replayed in, so the table does not grow without end.
async fn forget_old_pairs(state: &AppState) {
    if !workmate_adapter::backoff::random_u64().is_multiple_of(100) {
        return;
    }
    let before = now_ms() - 2 * sign::MAX_SKEW_MS;
    let scope = workmate_protocol::TenantId::from(REPLAY_SCOPE);
    if let Err(e) = state
        .store
        .spent_links()
        .forget_before(&scope, before)
        .await
    {
        tracing::debug!(error = %e, "Old DingTalk signature pairs were not forgotten this time.");
    }
}

/// A store failure while checking a callback: `503`, so DingTalk delivers it again.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the shape `map_err` calls with"
)]
fn not_checked(error: workmate_store::Error) -> ApiError {
    ApiError::NotReady {
        reason: format!("DingTalk callback not checked: {error}"),
    }
}

/// `plaintext` as the event push's encrypted answer.
fn seal(crypto: &Crypto, plaintext: &str) -> Value {
    let timestamp = now_ms().to_string();
    let nonce = workmate_adapter::backoff::random_u64().to_string();
    let encrypt = crypto.encrypt(plaintext);
    json!({
        "msg_signature": crypto.signature(&timestamp, &nonce, &encrypt),
        "encrypt": encrypt,
        "timeStamp": timestamp,
        "nonce": nonce,
    })
}

fn surface(state: &AppState) -> Result<Arc<DingTalkSurface>, ApiError> {
    state.platforms.require(Surface::Dingtalk)
}

/// The surface, when it takes HTTP callbacks: in Stream mode DingTalk sends them over the
/// connection, so a request here is not DingTalk's.
fn http_mode(state: &AppState) -> Result<Arc<DingTalkSurface>, ApiError> {
    let dingtalk = surface(state)?;
    if dingtalk.mode != DingTalkMode::Http {
        return Err(ApiError::Missing(
            "DingTalk HTTP callbacks are off: [platforms.dingtalk] mode is \"stream\"".into(),
        ));
    }
    Ok(dingtalk)
}

fn text(body: &[u8]) -> Result<&str, ApiError> {
    std::str::from_utf8(body).map_err(|_| ApiError::BadRequest("the body is not UTF-8".into()))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// An event push that is not DingTalk's, or not for this app.
fn refused(error: CryptoError) -> ApiError {
    match error {
        CryptoError::SignatureMismatch => ApiError::BadSignature(error.to_string()),
        other => ApiError::BadRequest(other.to_string()),
    }
}
