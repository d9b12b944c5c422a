//! CardKit's calls: create a card entity, replace it, stream an element's text, change its
//! settings. The rules (sequences, streaming, sizes) are [`super::cards`]'s.
//!
//! Invariant: a card arrives as `{"type":"card_json","data":"<Card JSON 2.0 as a string>"}`
//! (and settings as a string), as Feishu takes them; anything else is refused with code 10002.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::api::body_of;
use super::cards::CardError;
use super::{Answer, Refusal, ok};
use crate::AppState;

/// A parameter is wrong.
const BAD_PARAM: i64 = 10_002;

impl From<CardError> for Refusal {
    fn from(e: CardError) -> Self {
        Self::new(e.code(), e.to_string())
    }
}

fn bad(msg: &str) -> Refusal {
    Refusal::new(BAD_PARAM, msg)
}

/// The Card JSON of `{"type":"card_json","data":"…"}`.
fn card_json(card: Option<&Value>) -> Result<Value, Refusal> {
    let card = card.ok_or_else(|| bad("no card"))?;
    if card.get("type").and_then(Value::as_str) != Some("card_json") {
        return Err(bad("the card's type must be card_json"));
    }
    let data = card
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("the card's data must be Card JSON as a string"))?;
    serde_json::from_str(data)
        .map_err(|e| CardError::BadCard(format!("the card's data is not JSON: {e}")).into())
}

/// The `sequence` and `uuid` of an operation.
fn sequenced(body: &Value) -> Result<(i64, Option<&str>), Refusal> {
    let sequence = body
        .get("sequence")
        .and_then(Value::as_i64)
        .ok_or_else(|| bad("sequence is required"))?;
    Ok((sequence, body.get("uuid").and_then(Value::as_str)))
}

/// `POST cardkit/v1/cards`.
pub(crate) async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let body = body_of(&state, &headers, &body, BAD_PARAM)?;
    let card_id = state.feishu.cards.create(card_json(Some(&body))?)?;
    Ok(ok(json!({ "card_id": card_id })))
}

/// `PUT cardkit/v1/cards/{card_id}`: the whole card.
pub(crate) async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(card_id): Path<String>,
    body: Bytes,
) -> Answer {
    let body = body_of(&state, &headers, &body, BAD_PARAM)?;
    let card = card_json(body.get("card"))?;
    let (sequence, key) = sequenced(&body)?;
    state.feishu.cards.update(&card_id, card, sequence, key)?;
    Ok(ok(json!({})))
}

/// `PUT cardkit/v1/cards/{card_id}/elements/{element_id}/content`: streaming text.
pub(crate) async fn content(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((card_id, element_id)): Path<(String, String)>,
    body: Bytes,
) -> Answer {
    let body = body_of(&state, &headers, &body, BAD_PARAM)?;
    let content = body
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("content is required"))?;
    let (sequence, key) = sequenced(&body)?;
    state
        .feishu
        .cards
        .stream(&card_id, &element_id, content, sequence, key)?;
    Ok(ok(json!({})))
}

/// `PATCH cardkit/v1/cards/{card_id}/settings`.
pub(crate) async fn settings(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(card_id): Path<String>,
    body: Bytes,
) -> Answer {
    let body = body_of(&state, &headers, &body, BAD_PARAM)?;
    let settings: Value = body
        .get("settings")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or_else(|| bad("settings must be a JSON object as a string"))?;
    let (sequence, key) = sequenced(&body)?;
    state
        .feishu
        .cards
        .settings(&card_id, &settings, sequence, key)?;
    Ok(ok(json!({})))
}
