//! `POST /sandbox/wecom/say` and `POST /sandbox/wecom/click`: what a sandbox person does, posted
//! to workmate's `/v1/platforms/wecom/callback` as WeCom posts it, encrypted and signed
//! ([`super::callbacks`]), and workmate's sealed passive reply applied as WeCom applies it.
//!
//! Invariants: a message's passive reply is shown in its thread (a stream is then followed,
//! [`super::stream`]); a click sends the key and `task_id` of the card stored under the clicked
//! message, never ones from the page; a click's `update_template_card` answer replaces every
//! card with that `task_id`, for everyone (an answer for only some `userids` is refused: the
//! page has one view), and an empty answer changes nothing. A reply that does not verify, or is
//! not what WeCom takes, is an error and changes nothing.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{BOT_NAME, CHAT_ID, callbacks, cards, user_name};
use crate::store::NewMessage;
use crate::{AppState, Error, Result};

/// Where workmate takes the smart robot's callbacks.
const CALLBACK: &str = "/v1/platforms/wecom/callback";

/// `POST /sandbox/wecom/say`.
#[derive(Debug, Deserialize)]
pub(crate) struct Say {
    /// The speaker's `userid`.
    user: String,
    text: String,
}

/// `POST /sandbox/wecom/click`.
#[derive(Debug, Deserialize)]
pub(crate) struct Click {
    /// The clicker's `userid`.
    user: String,
    /// The message that shows the card.
    message_id: String,
    /// The button's `key`.
    key: String,
}

/// Posts `plaintext` sealed to workmate's callback URL: the status and, for a success, the
/// opened passive reply (`None` when empty).
pub(crate) async fn exchange(
    state: &AppState,
    plaintext: &Value,
) -> Result<(StatusCode, Option<Value>)> {
    let sealed = callbacks::seal(&state.wecom.crypto, plaintext);
    let base = state.config.workmate_base.trim_end_matches('/');
    let response = state
        .http
        .post(format!("{base}{CALLBACK}?{}", sealed.query))
        .header("content-type", "application/json")
        .body(sealed.body)
        .send()
        .await?;
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = response.bytes().await?;
    if !status.is_success() {
        return Ok((status, None));
    }
    let reply = callbacks::open(&state.wecom.crypto, &body).map_err(Error::WeComAnswer)?;
    Ok((status, reply))
}

fn person(userid: &str) -> Result<()> {
    user_name(userid)
        .map(drop)
        .ok_or_else(|| Error::BadRequest(format!("unknown sandbox user {userid:?}")))
}

async fn do_say(state: &AppState, say: Say) -> Result<StatusCode> {
    person(&say.user)?;
    let typed = say.text.trim();
    let typed = typed
        .strip_prefix(&format!("@{BOT_NAME}"))
        .map_or(typed, str::trim_start);
    if typed.is_empty() {
        return Err(Error::BadRequest("nothing to say".into()));
    }
    let shown = format!("@{BOT_NAME} {typed}");
    let msgid = state
        .wecom
        .store
        .push(NewMessage::new(CHAT_ID, &say.user, &shown));
    let base = state.config.workmate_base.trim_end_matches('/');
    let response_url = format!("{base}/sandbox/wecom/response/{msgid}");
    let message = callbacks::mention(&msgid, &say.user, typed, &response_url);
    let (status, reply) = exchange(state, &message).await?;
    let Some(reply) = reply else {
        return Ok(status);
    };
    if reply.get("msgtype").and_then(Value::as_str).is_none() {
        return Err(Error::WeComAnswer(format!(
            "the reply has no msgtype: {reply}"
        )));
    }
    let stream_id = (reply["msgtype"] == "stream")
        .then(|| reply.get("stream").and_then(|s| s.get("id")))
        .flatten()
        .and_then(Value::as_str)
        .map(str::to_owned);
    let bubble = state.wecom.store.push(NewMessage {
        thread: Some(msgid.clone()),
        blocks: reply.clone(),
        ..NewMessage::new(CHAT_ID, BOT_NAME, "")
    });
    if let Some(stream_id) = stream_id {
        super::stream::follow(state, msgid, bubble, stream_id, say.user, reply);
    }
    Ok(status)
}

/// What the page is told of a click: whether workmate's answer updated the card.
async fn do_click(state: &AppState, click: Click) -> Result<(StatusCode, bool)> {
    person(&click.user)?;
    let message = state
        .wecom
        .store
        .get(CHAT_ID, &click.message_id)
        .ok_or_else(|| Error::BadRequest(format!("no message {:?}", click.message_id)))?;
    let card = message.blocks.get("template_card").unwrap_or(&Value::Null);
    let task_id = match cards::task_id(card) {
        Some(task_id) if cards::has_button(card, &click.key) => task_id.to_owned(),
        _ => {
            return Err(Error::BadRequest(format!(
                "message {:?} has no button with that key",
                click.message_id
            )));
        }
    };
    let event = callbacks::card_click(&click.user, &click.key, &task_id);
    let (status, reply) = exchange(state, &event).await?;
    let Some(reply) = reply else {
        return Ok((status, false));
    };
    if reply.get("response_type").and_then(Value::as_str) != Some("update_template_card") {
        return Err(Error::WeComAnswer(format!(
            "a click is answered with response_type \"update_template_card\", not {:?}",
            reply.get("response_type")
        )));
    }
    if reply.get("userids").is_some() {
        return Err(Error::WeComAnswer(
            "an update for some userids only: the sandbox shows one view for everyone".into(),
        ));
    }
    let updated = reply.get("template_card").cloned().unwrap_or_default();
    cards::check(&updated).map_err(Error::WeComAnswer)?;
    if cards::task_id(&updated) != Some(task_id.as_str()) {
        return Err(Error::WeComAnswer(format!(
            "the updated card's task_id is {:?}, not the clicked card's {task_id:?}",
            cards::task_id(&updated)
        )));
    }
    let shown = json!({ "msgtype": "template_card", "template_card": updated });
    let store = &state.wecom.store;
    for id in store.ids_where(|m| cards::task_id(&m.blocks["template_card"]) == Some(&task_id)) {
        store.redraw(&id, shown.clone());
    }
    Ok((status, true))
}

pub(crate) async fn say(State(state): State<AppState>, Json(say): Json<Say>) -> Response {
    crate::deliver::answer(do_say(&state, say).await)
}

pub(crate) async fn click(State(state): State<AppState>, Json(click): Json<Click>) -> Response {
    crate::deliver::click_answer(do_click(&state, click).await)
}
