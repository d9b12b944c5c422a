//! The open platform's token, card and robot-message calls.
//!
//! Invariant: only the configured app gets the token, and no other call is answered (nor
//! anything stored) without it in `x-acs-dingtalk-access-token`; a card or message names the
//! app as its robot and goes to the sandbox group or a sandbox person; a card's data is strings.

use std::collections::BTreeMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};

use super::cards::{Card, Kind, param_map};
use super::{Answer, BOT_NAME, CONVERSATION_ID, Refusal, TOKEN_LIFE, user_name};
use crate::AppState;
use crate::store::NewMessage;

/// The header the `v1.0` APIs read the access token from.
const TOKEN_HEADER: &str = "x-acs-dingtalk-access-token";
/// The space of a group card.
const GROUP_SPACE: &str = "dtv1.card//IM_GROUP.";
/// The space of a card in a person's one-to-one chat with the robot.
const ROBOT_SPACE: &str = "dtv1.card//IM_ROBOT.";

fn str_field<'a>(body: &'a Value, name: &str) -> Option<&'a str> {
    body.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The JSON object body of a call carrying the token handed out, or DingTalk's refusal.
fn authorised(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<Value, Refusal> {
    let token = headers.get(TOKEN_HEADER).and_then(|v| v.to_str().ok());
    if token != Some(state.dingtalk.token.as_str()) {
        return Err(Refusal::new(
            StatusCode::UNAUTHORIZED,
            "InvalidAuthentication",
            "不合法的access_token",
        ));
    }
    serde_json::from_slice::<Value>(body)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| Refusal::invalid("the body is not a JSON object"))
}

/// The robot code a call names must be the app's.
fn our_robot(state: &AppState, robot_code: Option<&str>) -> Result<(), Refusal> {
    if robot_code == Some(state.config.dingtalk.client_id.as_str()) {
        Ok(())
    } else {
        Err(Refusal::invalid(format!(
            "robotCode {robot_code:?} is not this app's"
        )))
    }
}

/// `POST /v1.0/oauth2/accessToken`.
pub(crate) async fn access_token(State(state): State<AppState>, body: Bytes) -> Answer {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let app = &state.config.dingtalk;
    let matches = str_field(&body, "appKey") == Some(app.client_id.as_str())
        && str_field(&body, "appSecret") == Some(app.client_secret.as_str());
    if !matches {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalidClientIdOrSecret",
            "无效的clientId或者clientSecret",
        ));
    }
    Ok(
        Json(json!({ "accessToken": state.dingtalk.token, "expireIn": TOKEN_LIFE }))
            .into_response(),
    )
}

/// The chat an `openSpaceId` names, if the robot may deliver there: the group, or a person.
fn space_of(state: &AppState, body: &Value) -> Result<String, Refusal> {
    let space = str_field(body, "openSpaceId").unwrap_or_default();
    if let Some(group) = space.strip_prefix(GROUP_SPACE) {
        our_robot(
            state,
            body.pointer("/imGroupOpenDeliverModel/robotCode")
                .and_then(Value::as_str),
        )?;
        return Ok(group.to_owned());
    }
    if let Some(user) = space.strip_prefix(ROBOT_SPACE) {
        our_robot(
            state,
            body.pointer("/imRobotOpenDeliverModel/robotCode")
                .and_then(Value::as_str),
        )?;
        return Ok(user.to_owned());
    }
    Err(Refusal::invalid(format!(
        "openSpaceId {space:?} is not an IM_GROUP or IM_ROBOT space"
    )))
}

/// A card's `privateData` (user id to `{"cardParamMap": {…}}`, strings only), each user's own
/// data over the shared data; absent is none.
fn private_data(
    value: Option<&Value>,
) -> Result<BTreeMap<String, serde_json::Map<String, Value>>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let users = value
        .as_object()
        .ok_or("privateData is not an object of user ids")?;
    users
        .iter()
        .map(|(user, data)| {
            let params = param_map(data.get("cardParamMap"))
                .map_err(|e| format!("privateData of {user}: {e}"))?;
            Ok((user.clone(), params))
        })
        .collect()
}

/// `POST /v1.0/card/instances/createAndDeliver`: a card, delivered into the group or a person's
/// chat with the robot. A space the robot is not in answers `success: false` in
/// `deliverResults`, as DingTalk does.
pub(crate) async fn create_and_deliver(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let body = authorised(&state, &headers, &body)?;
    let template = str_field(&body, "cardTemplateId")
        .ok_or_else(|| Refusal::invalid("cardTemplateId is missing"))?;
    let out_track_id =
        str_field(&body, "outTrackId").ok_or_else(|| Refusal::invalid("outTrackId is missing"))?;
    let params = param_map(body.pointer("/cardData/cardParamMap")).map_err(Refusal::invalid)?;
    let private = private_data(body.get("privateData")).map_err(Refusal::invalid)?;
    let space = space_of(&state, &body)?;
    let group = space.starts_with("cid");
    let space_type = if group { "IM_GROUP" } else { "IM_ROBOT" };
    let known = if group {
        space == CONVERSATION_ID
    } else {
        user_name(&space).is_some()
    };
    if !known {
        return Ok(Json(json!({
            "success": true,
            "result": {
                "outTrackId": out_track_id,
                "deliverResults": [{
                    "spaceType": space_type, "spaceId": space, "success": false,
                    "errorMsg": "robot is not a member of the space",
                }],
            },
        }))
        .into_response());
    }
    let kind = if template == state.config.dingtalk.card_template_id {
        Kind::Approval
    } else {
        Kind::Answer
    };
    let callback_type = str_field(&body, "callbackType").unwrap_or_default();
    if callback_type == "HTTP" && str_field(&body, "callbackRouteKey").is_none() {
        return Err(Refusal::invalid("an HTTP callback needs callbackRouteKey"));
    }
    let card = Card {
        kind,
        space: space.clone(),
        callback_type: callback_type.to_owned(),
        params,
        private,
        finalized: false,
        failed: false,
    };
    if state.dingtalk.cards.create(out_track_id, card) {
        state.dingtalk.store.push(NewMessage {
            card_id: Some(out_track_id.to_owned()),
            ..NewMessage::new(&space, BOT_NAME, "")
        });
    }
    Ok(Json(json!({
        "success": true,
        "result": {
            "outTrackId": out_track_id,
            "deliverResults": [{"spaceType": space_type, "spaceId": space, "success": true}],
        },
    }))
    .into_response())
}

/// `PUT /v1.0/card/instances`: a card's shared data, by key or whole; `privateData` sets
/// viewers' own data.
pub(crate) async fn update_card(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let body = authorised(&state, &headers, &body)?;
    let out_track_id =
        str_field(&body, "outTrackId").ok_or_else(|| Refusal::invalid("outTrackId is missing"))?;
    let by_key = body.pointer("/cardUpdateOptions/updateCardDataByKey") == Some(&json!(true));
    let cards = &state.dingtalk.cards;
    if let Some(shared) = body.get("cardData") {
        let params = param_map(shared.get("cardParamMap")).map_err(Refusal::invalid)?;
        cards
            .update(out_track_id, params, by_key)
            .map_err(Refusal::invalid)?;
    }
    if let Some(private) = body.get("privateData").and_then(Value::as_object) {
        for (viewer, data) in private {
            let params = param_map(data.get("cardParamMap")).map_err(Refusal::invalid)?;
            cards
                .update_private(out_track_id, viewer, params, by_key)
                .map_err(Refusal::invalid)?;
        }
    }
    Ok(Json(json!({ "success": true, "result": true })).into_response())
}

/// `PUT /v1.0/card/streaming`: an AI card's streamed variable.
pub(crate) async fn stream(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let body = authorised(&state, &headers, &body)?;
    let out_track_id =
        str_field(&body, "outTrackId").ok_or_else(|| Refusal::invalid("outTrackId is missing"))?;
    if str_field(&body, "guid").is_none() {
        return Err(Refusal::invalid("guid is missing"));
    }
    let flag = |name: &str| body.get(name).and_then(Value::as_bool).unwrap_or(false);
    state
        .dingtalk
        .cards
        .stream(
            out_track_id,
            str_field(&body, "key").unwrap_or_default(),
            body.get("content")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            flag("isFull"),
            flag("isFinalize"),
            flag("isError"),
        )
        .map_err(Refusal::invalid)?;
    Ok(Json(json!({ "success": true, "result": true })).into_response())
}

/// A robot message's `msgKey` and `msgParam`, as the page shows it.
fn robot_message(body: &Value) -> Result<Value, Refusal> {
    let key = str_field(body, "msgKey").unwrap_or_default();
    let param: Value = str_field(body, "msgParam")
        .and_then(|p| serde_json::from_str(p).ok())
        .filter(Value::is_object)
        .ok_or_else(|| Refusal::invalid("msgParam is not a JSON object string"))?;
    let complete = match key {
        "sampleText" => str_field(&param, "content").is_some(),
        "sampleMarkdown" => {
            str_field(&param, "title").is_some() && str_field(&param, "text").is_some()
        }
        other => {
            return Err(Refusal::invalid(format!(
                "msgKey {other:?} is not one the sandbox shows (sampleText, sampleMarkdown)"
            )));
        }
    };
    if !complete {
        return Err(Refusal::invalid(format!(
            "msgParam is incomplete for {key}"
        )));
    }
    Ok(json!({ "msgKey": key, "msgParam": param }))
}

fn query_key() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// `POST /v1.0/robot/groupMessages/send`: a message into the group.
pub(crate) async fn group_send(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let body = authorised(&state, &headers, &body)?;
    our_robot(&state, str_field(&body, "robotCode"))?;
    let message = robot_message(&body)?;
    if str_field(&body, "openConversationId") != Some(CONVERSATION_ID) {
        return Err(Refusal::invalid("robot is not a member of the group"));
    }
    state.dingtalk.store.push(NewMessage {
        blocks: message,
        ..NewMessage::new(CONVERSATION_ID, BOT_NAME, "")
    });
    Ok(Json(json!({ "processQueryKey": query_key() })).into_response())
}

/// `POST /v1.0/robot/oToMessages/batchSend`: a message to people, one by one; unknown staff ids
/// come back in `invalidStaffIdList`.
pub(crate) async fn batch_send(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let body = authorised(&state, &headers, &body)?;
    our_robot(&state, str_field(&body, "robotCode"))?;
    let message = robot_message(&body)?;
    let users: Vec<&str> = body
        .get("userIds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if users.is_empty() {
        return Err(Refusal::invalid("userIds is empty"));
    }
    let (known, invalid): (Vec<&str>, Vec<&str>) =
        users.into_iter().partition(|u| user_name(u).is_some());
    for user in known {
        state.dingtalk.store.push(NewMessage {
            blocks: message.clone(),
            ..NewMessage::new(user, BOT_NAME, "")
        });
    }
    Ok(
        Json(json!({ "processQueryKey": query_key(), "invalidStaffIdList": invalid }))
            .into_response(),
    )
}
