//! The fake Slack Web API: `chat.postMessage`, `chat.update`, `chat.postEphemeral`, `auth.test`
//! and `users.info`.
//!
//! Invariant: answers have Slack's shapes, always HTTP 200 with `ok` saying whether the call
//! worked, and nothing is stored or told unless the bearer token is the configured bot token.
//! `users.info` knows exactly the sandbox people ([`USERS`]), so cards name them as the page
//! does.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};

use crate::store::NewMessage;
use crate::{AppState, BOT_ID, BOT_USER_ID, TEAM_ID, USERS};

/// The time zone `users.info` gives every sandbox person.
const USER_TZ: &str = "UTC";

fn failure(error: &str) -> Json<Value> {
    Json(json!({ "ok": false, "error": error }))
}

/// Slack's error answer unless the call carries the configured bot token.
fn check_token(state: &AppState, headers: &HeaderMap) -> Result<(), Json<Value>> {
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match token {
        None => Err(failure("not_authed")),
        Some(token) if token != state.config.slack.bot_token => Err(failure("invalid_auth")),
        Some(_) => Ok(()),
    }
}

/// The JSON body of an authorised call, or Slack's error answer.
fn authorised(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<Value, Json<Value>> {
    check_token(state, headers)?;
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body).map_err(|_| failure("invalid_json"))
}

fn text_field<'a>(body: &'a Value, name: &str) -> Option<&'a str> {
    body.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

pub(crate) async fn post_message(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Json<Value> {
    let body = match authorised(&state, &headers, &body) {
        Ok(body) => body,
        Err(answer) => return answer,
    };
    let Some(channel) = text_field(&body, "channel") else {
        return failure("channel_not_found");
    };
    let text = text_field(&body, "text").unwrap_or_default();
    let blocks = body.get("blocks").cloned().unwrap_or(Value::Null);
    if text.is_empty() && blocks.as_array().is_none_or(Vec::is_empty) {
        return failure("no_text");
    }
    let ts = state.store.push(NewMessage {
        thread: text_field(&body, "thread_ts").map(str::to_owned),
        blocks,
        ..NewMessage::new(channel, BOT_USER_ID, text)
    });
    Json(json!({ "ok": true, "channel": channel, "ts": ts }))
}

pub(crate) async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Json<Value> {
    let body = match authorised(&state, &headers, &body) {
        Ok(body) => body,
        Err(answer) => return answer,
    };
    let (Some(channel), Some(ts)) = (text_field(&body, "channel"), text_field(&body, "ts")) else {
        return failure("message_not_found");
    };
    let text = text_field(&body, "text").unwrap_or_default();
    let blocks = body.get("blocks").cloned().unwrap_or(Value::Null);
    if !state.store.update(channel, ts, text, blocks) {
        return failure("message_not_found");
    }
    Json(json!({ "ok": true, "channel": channel, "ts": ts, "text": text }))
}

pub(crate) async fn post_ephemeral(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Json<Value> {
    let body = match authorised(&state, &headers, &body) {
        Ok(body) => body,
        Err(answer) => return answer,
    };
    let (Some(channel), Some(user)) = (text_field(&body, "channel"), text_field(&body, "user"))
    else {
        return failure("user_not_in_channel");
    };
    let text = text_field(&body, "text").unwrap_or_default();
    let blocks = body.get("blocks").cloned().unwrap_or(Value::Null);
    let ts = state.store.push(NewMessage {
        thread: text_field(&body, "thread_ts").map(str::to_owned),
        blocks,
        ephemeral_for: Some(user.to_owned()),
        ..NewMessage::new(channel, BOT_USER_ID, text)
    });
    Json(json!({ "ok": true, "message_ts": ts }))
}

pub(crate) async fn auth_test(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Json<Value> {
    if let Err(answer) = authorised(&state, &headers, &body) {
        return answer;
    }
    Json(json!({
        "ok": true,
        "url": "http://sandbox.local/",
        "team": "Sandbox",
        "user": "workmate",
        "team_id": TEAM_ID,
        "user_id": BOT_USER_ID,
        "bot_id": BOT_ID,
    }))
}

/// `users.info`: a sandbox person by id, from the query string or the body (form fields, as
/// Slack takes them, or JSON).
pub(crate) async fn users_info(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Json<Value> {
    if let Err(answer) = check_token(&state, &headers) {
        return answer;
    }
    let json_body = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let from_body = if json_body {
        serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|b| text_field(&b, "user").map(str::to_owned))
    } else {
        form_field(&body, "user")
    };
    let user =
        from_body.or_else(|| form_field(query.as_deref().unwrap_or_default().as_bytes(), "user"));
    let Some((id, name)) = user.and_then(|user| USERS.into_iter().find(|(id, _)| *id == user))
    else {
        return failure("user_not_found");
    };
    Json(json!({
        "ok": true,
        "user": {
            "id": id,
            "name": name.to_lowercase(),
            "real_name": name,
            "tz": USER_TZ,
            "profile": { "display_name": name, "real_name": name },
        },
    }))
}

/// A non-empty field of a form-encoded (`a=1&b=2`) body or query.
fn form_field(form: &[u8], name: &str) -> Option<String> {
    form_urlencoded::parse(form)
        .find(|(key, value)| key == name && !value.is_empty())
        .map(|(_, value)| value.into_owned())
}
