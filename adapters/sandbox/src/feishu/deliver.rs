//! `POST /sandbox/feishu/say` and `POST /sandbox/feishu/click`: what a sandbox user does, sent to
//! workmate's Feishu routes as Feishu sends it, encrypted and signed ([`super::events`]).
//!
//! Invariants: a click sends the callback value the stored card holds for the button, never one
//! from the page; workmate's answer to a click is applied as Feishu applies it: its card (if
//! any) replaces the clicked card, and its toast is shown, so a click that workmate answers
//! without a card leaves the card as it was.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::events::{self, Sealed};
use super::{CHAT_ID, user_name};
use crate::deliver::{failed, refused};
use crate::store::NewMessage;
use crate::{AppState, Error, Result};

/// `POST /sandbox/feishu/say`.
#[derive(Debug, Deserialize)]
pub(crate) struct Say {
    /// The speaker's `open_id`.
    user: String,
    text: String,
    /// The thread's root message, to reply in it.
    #[serde(default, alias = "thread_ts")]
    thread: Option<String>,
}

/// `POST /sandbox/feishu/click`.
#[derive(Debug, Deserialize)]
pub(crate) struct Click {
    /// The clicker's `open_id`.
    user: String,
    /// The message that shows the card.
    message_id: String,
    /// The button's `element_id`.
    button: String,
}

/// Posts a sealed body to workmate's `path`; the status and the answer's body.
async fn send(state: &AppState, path: &str, sealed: Sealed) -> Result<(StatusCode, Vec<u8>)> {
    let url = format!("{}{path}", state.config.workmate_base.trim_end_matches('/'));
    let response = state
        .http
        .post(url)
        .header("content-type", "application/json; charset=utf-8")
        .header("x-lark-request-timestamp", sealed.timestamp)
        .header("x-lark-request-nonce", sealed.nonce)
        .header("x-lark-signature", sealed.signature)
        .body(sealed.body)
        .send()
        .await?;
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = response.bytes().await?;
    Ok((status, body.to_vec()))
}

fn person(open_id: &str) -> Result<()> {
    user_name(open_id)
        .map(drop)
        .ok_or_else(|| Error::BadRequest(format!("unknown sandbox user {open_id:?}")))
}

async fn do_say(state: &AppState, say: Say) -> Result<StatusCode> {
    person(&say.user)?;
    let typed = say.text.trim();
    let typed = typed
        .strip_prefix(&format!("@{}", super::BOT_NAME))
        .map_or(typed, str::trim_start);
    if typed.is_empty() {
        return Err(Error::BadRequest("nothing to say".into()));
    }
    let thread = say.thread.filter(|t| !t.is_empty());
    if let Some(root) = &thread
        && state.feishu.store.find(root).is_none()
    {
        return Err(Error::BadRequest(format!("no thread {root:?}")));
    }
    let shown = format!("@{} {typed}", super::BOT_NAME);
    let message_id = state.feishu.store.push(NewMessage {
        thread: thread.clone(),
        ..NewMessage::new(CHAT_ID, &say.user, &shown)
    });
    let event = events::mention(
        &state.config.feishu,
        &say.user,
        &message_id,
        thread.as_deref(),
        typed,
    );
    let sealed = events::seal(&state.config.feishu, &event);
    let (status, _) = send(state, "/v1/platforms/feishu/events", sealed).await?;
    Ok(status)
}

/// The card a message shows: its card entity's, or the one sent inline.
fn card_of(state: &AppState, message_id: &str) -> Result<(String, Value, Option<String>)> {
    let (channel, message) = state
        .feishu
        .store
        .find(message_id)
        .ok_or_else(|| Error::BadRequest(format!("no message {message_id:?}")))?;
    let card = match &message.card_id {
        Some(card_id) => state.feishu.cards.get(card_id).unwrap_or_default(),
        None => message.blocks.clone(),
    };
    Ok((channel, card, message.card_id))
}

/// The callback value of the button `element_id` (Card JSON 2.0 `behaviors`, or 1.0 `value`).
fn button_value(card: &mut Value, element_id: &str) -> Option<Value> {
    let button = super::cards::element_mut(card, element_id)?;
    if button.get("tag").and_then(Value::as_str) != Some("button") {
        return None;
    }
    let callback = button
        .get("behaviors")
        .and_then(Value::as_array)
        .and_then(|b| {
            b.iter()
                .find(|b| b.get("type").and_then(Value::as_str) == Some("callback"))
        })
        .and_then(|b| b.get("value"));
    callback.or_else(|| button.get("value")).cloned()
}

/// What the page is told of a click: workmate's toast, once its card is applied.
async fn do_click(state: &AppState, click: Click) -> Result<(StatusCode, Value)> {
    person(&click.user)?;
    let (channel, mut card, card_id) = card_of(state, &click.message_id)?;
    let value = button_value(&mut card, &click.button).ok_or_else(|| {
        Error::BadRequest(format!(
            "message {:?} has no button {:?} with a callback",
            click.message_id, click.button
        ))
    })?;
    let callback = events::card_action(
        &state.config.feishu,
        &click.user,
        &click.message_id,
        &channel,
        value,
    );
    let sealed = events::seal(&state.config.feishu, &callback);
    let (status, body) = send(state, "/v1/platforms/feishu/card", sealed).await?;
    if !status.is_success() {
        return Ok((status, Value::Null));
    }
    let answer: Value =
        serde_json::from_slice(&body).map_err(|e| Error::BadAnswer(format!("not JSON: {e}")))?;
    if let Some(card) = answer.get("card") {
        if card.get("type").and_then(Value::as_str) != Some("raw") {
            return Err(Error::BadAnswer(format!(
                "card.type is {:?}, not \"raw\"",
                card.get("type")
            )));
        }
        let data = card.get("data").cloned().unwrap_or_default();
        match &card_id {
            Some(card_id) => state
                .feishu
                .cards
                .replace(card_id, data)
                .map_err(|e| Error::BadAnswer(e.to_string()))?,
            None => {
                super::cards::check(&data).map_err(|e| Error::BadAnswer(e.to_string()))?;
                state
                    .feishu
                    .store
                    .update(&channel, &click.message_id, "", data);
            }
        }
    }
    Ok((status, answer.get("toast").cloned().unwrap_or_default()))
}

pub(crate) async fn say(State(state): State<AppState>, Json(say): Json<Say>) -> Response {
    crate::deliver::answer(do_say(&state, say).await)
}

pub(crate) async fn click(State(state): State<AppState>, Json(click): Json<Click>) -> Response {
    match do_click(&state, click).await {
        Ok((status, toast)) if status.is_success() => {
            Json(json!({ "ok": true, "status": status.as_u16(), "toast": toast })).into_response()
        }
        Ok((status, _)) => refused(status),
        Err(e) => failed(e),
    }
}
