//! The open platform's token, bot, contact and message calls.
//!
//! Invariant: only the configured app gets the token, and no other call is answered (nor
//! anything stored) without it; a message names a known chat or person and a content Feishu
//! takes, and a second send with the same `uuid` answers the first message instead of posting
//! again.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Answer, BOT_NAME, BOT_OPEN_ID, CHAT_ID, Refusal, TOKEN_LIFE, ok, user_name};
use crate::AppState;
use crate::store::{NewMessage, unix_now};

/// A request without a token (99991661).
const NO_TOKEN: i64 = 99_991_661;
/// A token Feishu did not hand out, or one that expired (99991663).
const BAD_TOKEN: i64 = 99_991_663;
/// The app id or secret is wrong (10014).
const BAD_SECRET: i64 = 10_014;
/// A message parameter is wrong (230001).
const BAD_MESSAGE: i64 = 230_001;
/// The bot is not in that chat (230002).
const NOT_IN_CHAT: i64 = 230_002;
/// The bot cannot reach that person (230013).
const NO_SUCH_PERSON: i64 = 230_013;
/// The content is too long (230025).
const TOO_LONG: i64 = 230_025;
/// The card content cannot be sent (230099).
const BAD_CARD: i64 = 230_099;
/// No permission to read that person (41050).
const NO_USER: i64 = 41_050;

/// Feishu's refusal unless the call carries the tenant token handed out.
pub(super) fn authorised(state: &AppState, headers: &HeaderMap) -> Result<(), Refusal> {
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match token {
        None => Err(Refusal::new(
            NO_TOKEN,
            "Missing access token for authorization.",
        )),
        Some(token) if token != state.feishu.token => Err(Refusal::new(
            BAD_TOKEN,
            "Invalid access token for authorization.",
        )),
        Some(_) => Ok(()),
    }
}

/// The JSON object body of an authorised call, or Feishu's refusal with `bad_code`.
pub(super) fn body_of(
    state: &AppState,
    headers: &HeaderMap,
    body: &[u8],
    bad_code: i64,
) -> Result<Value, Refusal> {
    authorised(state, headers)?;
    serde_json::from_slice::<Value>(body)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| Refusal::new(bad_code, "the body is not a JSON object"))
}

fn str_field<'a>(body: &'a Value, name: &str) -> Option<&'a str> {
    body.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `POST auth/v3/tenant_access_token/internal`.
pub(crate) async fn tenant_token(State(state): State<AppState>, body: Bytes) -> Answer {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let app = &state.config.feishu;
    let matches = str_field(&body, "app_id") == Some(app.app_id.as_str())
        && str_field(&body, "app_secret") == Some(app.app_secret.as_str());
    if !matches {
        return Err(Refusal::new(BAD_SECRET, "app secret invalid"));
    }
    Ok(axum::Json(json!({
        "code": 0,
        "msg": "ok",
        "tenant_access_token": state.feishu.token,
        "expire": TOKEN_LIFE,
    }))
    .into_response())
}

/// `GET bot/v3/info`: the bot, at the top level as Feishu answers it.
pub(crate) async fn bot_info(State(state): State<AppState>, headers: HeaderMap) -> Answer {
    authorised(&state, &headers)?;
    Ok(axum::Json(json!({
        "code": 0,
        "msg": "ok",
        "bot": {
            "activate_status": 2,
            "app_name": BOT_NAME,
            "avatar_url": "",
            "ip_white_list": [],
            "open_id": BOT_OPEN_ID,
        },
    }))
    .into_response())
}

/// `GET contact/v3/users/{open_id}`: a sandbox person.
pub(crate) async fn user(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(open_id): Path<String>,
) -> Answer {
    authorised(&state, &headers)?;
    match user_name(&open_id) {
        Some(name) => Ok(ok(
            json!({ "user": { "open_id": open_id, "name": name, "en_name": name } }),
        )),
        None => Err(Refusal::new(NO_USER, "no user authority error")),
    }
}

/// What a message shows: its text, an inline card, or a card entity.
struct Content {
    text: String,
    card: Value,
    card_id: Option<String>,
}

/// The content of a `msg_type` message, as the page shows it.
fn content_of(state: &AppState, msg_type: &str, content: &str) -> Result<Content, Refusal> {
    let bad = |msg: &str| Refusal::new(BAD_MESSAGE, msg);
    if content.len() > super::cards::MAX_CARD_BYTES {
        return Err(Refusal::new(TOO_LONG, "the message content is too long"));
    }
    let value: Value =
        serde_json::from_str(content).map_err(|_| bad("content is not a JSON string"))?;
    match msg_type {
        "text" => {
            let text = str_field(&value, "text").ok_or_else(|| bad("a text message needs text"))?;
            Ok(Content {
                text: text.to_owned(),
                card: Value::Null,
                card_id: None,
            })
        }
        "interactive" if value.get("type").and_then(Value::as_str) == Some("card") => {
            let card_id = value
                .pointer("/data/card_id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("a card reference needs data.card_id"))?;
            if state.feishu.cards.get(card_id).is_none() {
                return Err(Refusal::new(BAD_CARD, "the card entity does not exist"));
            }
            Ok(Content {
                text: String::new(),
                card: Value::Null,
                card_id: Some(card_id.to_owned()),
            })
        }
        "interactive" => {
            super::cards::check(&value).map_err(|e| Refusal::new(BAD_CARD, e.to_string()))?;
            Ok(Content {
                text: String::new(),
                card: value,
                card_id: None,
            })
        }
        other => Err(bad(&format!(
            "msg_type {other:?} is not one the sandbox shows (text, interactive)"
        ))),
    }
}

/// Stores the bot's message in `channel` (and `thread`); the answer with its id.
fn post(state: &AppState, body: &Value, channel: &str, thread: Option<String>) -> Answer {
    let msg_type = str_field(body, "msg_type").unwrap_or_default();
    let uuid = str_field(body, "uuid");
    if let Some(earlier) = uuid.and_then(|uuid| state.feishu.sent_with(uuid)) {
        return Ok(answer(&earlier, channel, msg_type));
    }
    let content = content_of(
        state,
        msg_type,
        str_field(body, "content").unwrap_or_default(),
    )?;
    let id = state.feishu.store.push(NewMessage {
        thread,
        blocks: content.card,
        card_id: content.card_id.clone(),
        ..NewMessage::new(channel, BOT_OPEN_ID, &content.text)
    });
    if let Some(card_id) = &content.card_id
        && let Err(e) = state.feishu.cards.send(card_id, &id)
    {
        state.feishu.store.remove(&id);
        return Err(Refusal::new(BAD_CARD, e.to_string()));
    }
    if let Some(uuid) = uuid {
        state.feishu.remember(uuid, &id);
    }
    Ok(answer(&id, channel, msg_type))
}

fn answer(message_id: &str, chat_id: &str, msg_type: &str) -> Response {
    ok(json!({
        "message_id": message_id,
        "chat_id": chat_id,
        "msg_type": msg_type,
        "create_time": (unix_now() * 1000).to_string(),
        "deleted": false,
        "updated": false,
        "sender": { "id": BOT_OPEN_ID, "id_type": "open_id", "sender_type": "app" },
    }))
}

/// `POST im/v1/messages?receive_id_type=…`: a message to the chat or, by `open_id`, to a person.
pub(crate) async fn send(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Answer {
    let body = body_of(&state, &headers, &body, BAD_MESSAGE)?;
    let id_type = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(key, _)| key == "receive_id_type")
        .map(|(_, value)| value.into_owned());
    let receive_id = str_field(&body, "receive_id").unwrap_or_default();
    let known = match id_type.as_deref() {
        Some("chat_id") if receive_id == CHAT_ID => Ok(()),
        Some("chat_id") => Err((NOT_IN_CHAT, "The bot is not in the chat.")),
        Some("open_id") if user_name(receive_id).is_some() => Ok(()),
        Some("open_id") => Err((NO_SUCH_PERSON, "The bot cannot reach this user.")),
        _ => Err((
            BAD_MESSAGE,
            "receive_id_type must be chat_id or open_id in the sandbox",
        )),
    };
    known.map_err(|(code, msg)| Refusal::new(code, msg))?;
    post(&state, &body, receive_id, None)
}

/// `POST im/v1/messages/{message_id}/reply`: a message in the thread of `message_id`.
pub(crate) async fn reply(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(message_id): Path<String>,
    body: Bytes,
) -> Answer {
    let body = body_of(&state, &headers, &body, BAD_MESSAGE)?;
    let (channel, message) = state
        .feishu
        .store
        .find(&message_id)
        .ok_or_else(|| Refusal::new(BAD_MESSAGE, "invalid message_id"))?;
    let root = message.thread_ts.unwrap_or(message.ts);
    post(&state, &body, &channel, Some(root))
}
