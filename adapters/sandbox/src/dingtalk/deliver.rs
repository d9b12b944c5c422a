//! `POST /sandbox/dingtalk/say` and `POST /sandbox/dingtalk/click`: what a sandbox person does,
//! posted to workmate's HTTP-mode routes as DingTalk posts it, signed with the app's secret.
//!
//! Invariants: a message is a group robot callback that @-mentions the robot, signed with
//! `timestamp` (Unix ms) and `sign` ([`workmate_dingtalk::sign::robot_sign`]); a click is sent
//! only for a button the stored approval card shows the clicker (pending, its choice in
//! `choices`), signed with `x-ddpaas-signature-timestamp` and `x-ddpaas-signature`; the click's
//! answer (`cardData.cardParamMap`, strings) becomes the clicker's private view of the card, an
//! empty answer changes nothing, and anything else is an error that changes nothing.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_dingtalk::sign;

use super::cards::param_map;
use super::{BOT_NAME, CONVERSATION_ID, CORP_ID, user_name};
use crate::store::NewMessage;
use crate::{AppState, Error, Result};

/// Where workmate takes the robot's callbacks.
const ROBOT: &str = "/v1/platforms/dingtalk/robot";
/// Where workmate takes card callbacks.
const CARD: &str = "/v1/platforms/dingtalk/card";

/// `POST /sandbox/dingtalk/say`.
#[derive(Debug, Deserialize)]
pub(crate) struct Say {
    /// The speaker's staff id.
    user: String,
    text: String,
}

/// `POST /sandbox/dingtalk/click`.
#[derive(Debug, Deserialize)]
pub(crate) struct Click {
    /// The clicker's staff id.
    user: String,
    /// The card's `outTrackId`.
    card: String,
    /// The button's action id: an approval choice.
    choice: String,
}

/// Now, in Unix milliseconds: DingTalk's timestamps.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Posts `body` to workmate's `path` with `headers`; the status and the answer's body.
async fn send(
    state: &AppState,
    path: &str,
    headers: [(&str, String); 2],
    body: &Value,
) -> Result<(StatusCode, Vec<u8>)> {
    let url = format!("{}{path}", state.config.workmate_base.trim_end_matches('/'));
    let mut request = state
        .http
        .post(url)
        .header("content-type", "application/json; charset=utf-8")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request.send().await?;
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = response.bytes().await?;
    Ok((status, body.to_vec()))
}

fn person(staff_id: &str) -> Result<&'static str> {
    user_name(staff_id)
        .ok_or_else(|| Error::BadRequest(format!("unknown sandbox user {staff_id:?}")))
}

/// The robot callback of `staff_id` @-mentioning the robot in the group with `text`.
fn robot_message(state: &AppState, msg_id: &str, staff_id: &str, name: &str, text: &str) -> Value {
    json!({
        "msgId": msg_id,
        "msgtype": "text",
        "text": { "content": text },
        "conversationId": CONVERSATION_ID,
        "conversationType": "2",
        "conversationTitle": "general",
        "chatbotCorpId": CORP_ID,
        "chatbotUserId": "$:LWCP_v1:$sandboxrobot",
        "senderStaffId": staff_id,
        "senderId": format!("$:LWCP_v1:${staff_id}"),
        "senderNick": name,
        "senderCorpId": CORP_ID,
        "isAdmin": false,
        "isInAtList": true,
        "atUsers": [{ "dingtalkId": "$:LWCP_v1:$sandboxrobot" }],
        "robotCode": state.config.dingtalk.client_id,
        "createAt": now_ms(),
    })
}

async fn do_say(state: &AppState, say: Say) -> Result<StatusCode> {
    let name = person(&say.user)?;
    let typed = say.text.trim();
    let typed = typed
        .strip_prefix(&format!("@{BOT_NAME}"))
        .map_or(typed, str::trim_start);
    if typed.is_empty() {
        return Err(Error::BadRequest("nothing to say".into()));
    }
    let shown = format!("@{BOT_NAME} {typed}");
    let msg_id = state
        .dingtalk
        .store
        .push(NewMessage::new(CONVERSATION_ID, &say.user, &shown));
    let message = robot_message(state, &msg_id, &say.user, name, typed);
    let timestamp = now_ms().to_string();
    let signature = sign::robot_sign(&state.config.dingtalk.client_secret, &timestamp);
    let headers = [("timestamp", timestamp), ("sign", signature)];
    let (status, _) = send(state, ROBOT, headers, &message).await?;
    Ok(status)
}

/// What the page is told of a click: whether workmate's answer changed the clicker's view.
async fn do_click(state: &AppState, click: Click) -> Result<(StatusCode, bool)> {
    person(&click.user)?;
    let card = state
        .dingtalk
        .cards
        .get(&click.card)
        .ok_or_else(|| Error::BadRequest(format!("no card {:?}", click.card)))?;
    if !card.offers(&click.user, &click.choice) {
        return Err(Error::BadRequest(format!(
            "card {:?} shows no button {:?}",
            click.card, click.choice
        )));
    }
    if card.callback_type != "HTTP" {
        return Err(Error::BadRequest(format!(
            "card {:?} takes its clicks over {:?}; the sandbox sends them over HTTP",
            click.card, card.callback_type
        )));
    }
    let group = card.space == CONVERSATION_ID;
    // The template's button params, `${click_key}` filled from what the clicker's client sees.
    let mut params = json!({"action": click.choice});
    if let Some(key) = card.view(&click.user).get("click_key") {
        params["click_key"] = key.clone();
    }
    let content = json!({"cardPrivateData": {"actionIds": [click.choice], "params": params}});
    let callback = json!({
        "type": "actionCallback",
        "outTrackId": click.card,
        "corpId": CORP_ID,
        "userId": click.user,
        "userIdType": 1,
        "spaceType": if group { "IM_GROUP" } else { "IM_ROBOT" },
        "spaceId": card.space,
        "content": content.to_string(),
        "extension": "{}",
    });
    let timestamp = now_ms().to_string();
    let signature = sign::card_callback_sign(&state.config.dingtalk.client_secret, &timestamp);
    let headers = [
        ("x-ddpaas-signature-timestamp", timestamp),
        ("x-ddpaas-signature", signature),
    ];
    let (status, body) = send(state, CARD, headers, &callback).await?;
    if !status.is_success() {
        return Ok((status, false));
    }
    let answer: Value = serde_json::from_slice(&body)
        .map_err(|e| Error::DingTalkAnswer(format!("not JSON: {e}")))?;
    let Some(data) = answer.get("cardData") else {
        return Ok((status, false));
    };
    let params = param_map(data.get("cardParamMap")).map_err(Error::DingTalkAnswer)?;
    let by_key = answer.pointer("/cardUpdateOptions/updateCardDataByKey") == Some(&json!(true));
    state
        .dingtalk
        .cards
        .update_private(&click.card, &click.user, params, by_key)
        .map_err(Error::DingTalkAnswer)?;
    Ok((status, true))
}

pub(crate) async fn say(State(state): State<AppState>, Json(say): Json<Say>) -> Response {
    crate::deliver::answer(do_say(&state, say).await)
}

pub(crate) async fn click(State(state): State<AppState>, Json(click): Json<Click>) -> Response {
    crate::deliver::click_answer(do_click(&state, click).await)
}
