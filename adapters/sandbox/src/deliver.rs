//! `POST /sandbox/say` and `POST /sandbox/click`: what a sandbox user does, sent to workmate as
//! Slack would send it; and the HTTP client and answers the Feishu, WeCom and DingTalk sides
//! share.
//!
//! Invariant: every request to workmate is signed over exactly the bytes sent, with a fresh
//! timestamp; an event has a unique `event_id`, so workmate's dedupe never drops a new message.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::warn;

use crate::store::{NewMessage, unix_now};
use crate::{AppState, BOT_USER_ID, CHANNEL_ID, Error, Result, TEAM_ID, USERS};

/// A plain client for workmate's own (usually loopback, plain HTTP) address: a fixed
/// destination.
pub(crate) fn client() -> Result<reqwest::Client> {
    workmate_net::fixed_client(
        Duration::from_secs(5),
        Some(Duration::from_secs(10)),
        reqwest::header::HeaderMap::new(),
    )
    .map_err(Error::Client)
}

/// `POST /sandbox/say`.
#[derive(Debug, Deserialize)]
pub(crate) struct Say {
    user: String,
    text: String,
    #[serde(default)]
    thread_ts: Option<String>,
}

/// `POST /sandbox/click`.
#[derive(Debug, Deserialize)]
pub(crate) struct Click {
    user: String,
    #[serde(default)]
    channel: Option<String>,
    message_ts: String,
    action_id: String,
    value: String,
}

fn user_name(user: &str) -> Result<&'static str> {
    USERS
        .iter()
        .find(|(id, _)| *id == user)
        .map(|(_, name)| *name)
        .ok_or_else(|| Error::BadRequest(format!("unknown sandbox user {user:?}")))
}

/// What the page is told of a request sent to workmate.
pub(crate) fn answer(result: Result<StatusCode>) -> Response {
    match result {
        Ok(status) if status.is_success() => {
            Json(json!({ "ok": true, "status": status.as_u16() })).into_response()
        }
        Ok(status) => refused(status),
        Err(e) => failed(e),
    }
}

/// The page's answer to a click sent on: workmate's status, and whether the click's answer
/// changed a card.
pub(crate) fn click_answer(result: Result<(StatusCode, bool)>) -> Response {
    match result {
        Ok((status, updated)) if status.is_success() => {
            Json(json!({ "ok": true, "status": status.as_u16(), "updated": updated }))
                .into_response()
        }
        Ok((status, _)) => refused(status),
        Err(e) => failed(e),
    }
}

/// workmate answered with a status that is not a success.
pub(crate) fn refused(status: StatusCode) -> Response {
    warn!(
        status = status.as_u16(),
        "workmate refused a sandbox request."
    );
    (
        StatusCode::BAD_GATEWAY,
        Json(json!({ "ok": false, "status": status.as_u16(), "error": "workmate refused the request" })),
    )
        .into_response()
}

/// The request was not for workmate to take, or did not reach it.
pub(crate) fn failed(e: Error) -> Response {
    match e {
        Error::BadRequest(why) => (
            StatusCode::BAD_REQUEST,
            Json(json!({ "ok": false, "error": why })),
        )
            .into_response(),
        e => {
            warn!(error = %e, "A sandbox request did not reach workmate.");
            (
                StatusCode::BAD_GATEWAY,
                Json(json!({ "ok": false, "error": e.to_string() })),
            )
                .into_response()
        }
    }
}

/// Signs `body` and posts it to workmate's `path`.
async fn send(
    state: &AppState,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<StatusCode> {
    let timestamp = unix_now().to_string();
    let signature = workmate_slack::sign(
        state.config.slack.signing_secret.as_bytes(),
        &timestamp,
        &body,
    );
    let url = format!("{}{path}", state.config.workmate_base.trim_end_matches('/'));
    let response = state
        .http
        .post(url)
        .header("content-type", content_type)
        .header("x-slack-request-timestamp", timestamp)
        .header("x-slack-signature", signature)
        .body(body)
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY))
}

/// The `event_callback` of a sandbox user mentioning the bot.
fn mention_event(user: &str, text: &str, ts: &str, thread_ts: Option<&str>) -> Value {
    let mut event = json!({
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": CHANNEL_ID,
        "event_ts": ts,
    });
    if let (Some(thread_ts), Some(object)) = (thread_ts, event.as_object_mut()) {
        object.insert("thread_ts".into(), thread_ts.into());
    }
    json!({
        "token": "sandbox",
        "team_id": TEAM_ID,
        "api_app_id": "ASANDBOX",
        "event": event,
        "type": "event_callback",
        "event_id": format!("Ev{}", uuid::Uuid::new_v4().simple()),
        "event_time": unix_now(),
    })
}

async fn do_say(state: &AppState, say: Say) -> Result<StatusCode> {
    user_name(&say.user)?;
    let trimmed = say.text.trim();
    if trimmed.is_empty() {
        return Err(Error::BadRequest("nothing to say".into()));
    }
    let mention = format!("<@{BOT_USER_ID}>");
    let text = if trimmed.starts_with(&mention) {
        trimmed.to_owned()
    } else {
        format!("{mention} {trimmed}")
    };
    let thread_ts = say.thread_ts.filter(|t| !t.is_empty());
    let ts = state.store.push(NewMessage {
        thread: thread_ts.clone(),
        ..NewMessage::new(CHANNEL_ID, &say.user, &text)
    });
    let envelope = mention_event(&say.user, &text, &ts, thread_ts.as_deref());
    let body = serde_json::to_vec(&envelope).map_err(|e| Error::BadRequest(e.to_string()))?;
    send(
        state,
        "/v1/platforms/slack/events",
        "application/json",
        body,
    )
    .await
}

/// The `block_actions` payload of a button click.
fn block_actions(click: &Click, name: &str, channel: &str, message: Option<Value>) -> Value {
    let block_id = message
        .as_ref()
        .and_then(|m| m.get("blocks"))
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks.iter().find(|b| {
                b.get("elements")
                    .and_then(Value::as_array)
                    .is_some_and(|els| {
                        els.iter().any(|e| {
                            e.get("action_id").and_then(Value::as_str) == Some(&click.action_id)
                        })
                    })
            })
        })
        .and_then(|b| b.get("block_id"))
        .cloned()
        .unwrap_or_else(|| Value::from("sandbox"));
    let message = message.unwrap_or_else(|| json!({ "type": "message", "ts": click.message_ts }));
    json!({
        "type": "block_actions",
        "user": {
            "id": click.user,
            "username": name.to_lowercase(),
            "name": name,
            "team_id": TEAM_ID,
        },
        "api_app_id": "ASANDBOX",
        "token": "sandbox",
        "container": {
            "type": "message",
            "message_ts": click.message_ts,
            "channel_id": channel,
            "is_ephemeral": false,
        },
        "trigger_id": format!("sandbox.{}", uuid::Uuid::new_v4().simple()),
        "team": { "id": TEAM_ID, "domain": "sandbox" },
        "channel": {
            "id": channel,
            "name": if channel == CHANNEL_ID { "general" } else { channel },
        },
        "message": message,
        "state": { "values": {} },
        "actions": [{
            "type": "button",
            "action_id": click.action_id,
            "block_id": block_id,
            "value": click.value,
            "action_ts": format!("{}.000000", unix_now()),
        }],
    })
}

async fn do_click(state: &AppState, click: Click) -> Result<StatusCode> {
    let name = user_name(&click.user)?;
    let channel = click
        .channel
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| CHANNEL_ID.to_owned());
    let message = state.store.get(&channel, &click.message_ts).map(|m| {
        let mut message = json!({
            "type": "message",
            "user": m.user,
            "ts": m.ts,
            "text": m.text,
            "blocks": m.blocks,
        });
        if let (Some(thread_ts), Some(object)) = (m.thread_ts, message.as_object_mut()) {
            object.insert("thread_ts".into(), thread_ts.into());
        }
        message
    });
    let payload = block_actions(&click, name, &channel, message);
    let payload = serde_json::to_string(&payload).map_err(|e| Error::BadRequest(e.to_string()))?;
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload)
        .finish();
    send(
        state,
        "/v1/platforms/slack/interactions",
        "application/x-www-form-urlencoded",
        body.into_bytes(),
    )
    .await
}

pub(crate) async fn say(State(state): State<AppState>, Json(say): Json<Say>) -> Response {
    answer(do_say(&state, say).await)
}

pub(crate) async fn click(State(state): State<AppState>, Json(click): Json<Click>) -> Response {
    answer(do_click(&state, click).await)
}
