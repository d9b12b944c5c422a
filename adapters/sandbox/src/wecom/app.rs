//! The self-built app (自建应用) beside the smart robot, as far as workmate uses it here: its
//! `access_token` (`GET /sandbox/wecom/cgi-bin/gettoken`), the name of a person
//! (`GET …/cgi-bin/user/get`), and app messages to a person (`POST …/cgi-bin/message/send`),
//! shown as that person's direct messages from workmate.
//!
//! Answers have WeCom's shape, always HTTP 200: `{"errcode":0,"errmsg":"ok",…}`, or a non-zero
//! `errcode`: 40001 (a wrong secret or token), 60111 (no such userid), 47001 (not JSON), 40008 (a
//! message type the sandbox does not show), 40058 (a bad parameter).
//!
//! Invariant: nothing is answered or stored without the app's token, which only the configured
//! corp id and secret get; a message is stored only for a sandbox person, in their own direct
//! chat, never in the group.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{BAD_MSGTYPE, BAD_PARAMETER, BOT_NAME, NOT_JSON, cards, refused, user_name};
use crate::AppState;
use crate::store::NewMessage;

/// The app's access token in the sandbox.
const ACCESS_TOKEN: &str = "sandbox-app-token";
/// A wrong secret or token.
const BAD_CREDENTIAL: i64 = 40_001;
/// No such userid.
const NO_USER: i64 = 60_111;

#[derive(Debug, Deserialize)]
pub(crate) struct TokenQuery {
    #[serde(default)]
    corpid: String,
    #[serde(default)]
    corpsecret: String,
}

/// `GET /cgi-bin/gettoken?corpid=…&corpsecret=…`.
pub(crate) async fn gettoken(
    State(state): State<AppState>,
    Query(query): Query<TokenQuery>,
) -> Json<Value> {
    let wecom = &state.wecom;
    if query.corpid != wecom.corp_id || query.corpsecret != wecom.app_secret {
        return refused(BAD_CREDENTIAL, "invalid credential: corpid or corpsecret");
    }
    Json(json!({
        "errcode": 0, "errmsg": "ok", "access_token": ACCESS_TOKEN, "expires_in": 7200,
    }))
}

#[derive(Debug, Deserialize)]
pub(crate) struct UserQuery {
    #[serde(default)]
    access_token: String,
    #[serde(default)]
    userid: String,
}

/// `GET /cgi-bin/user/get?access_token=…&userid=…`: the name WeCom shows.
pub(crate) async fn user_get(Query(query): Query<UserQuery>) -> Json<Value> {
    if query.access_token != ACCESS_TOKEN {
        return refused(BAD_CREDENTIAL, "invalid access_token");
    }
    match user_name(&query.userid) {
        Some(name) => Json(json!({
            "errcode": 0, "errmsg": "ok", "userid": query.userid, "name": name,
        })),
        None => refused(NO_USER, format!("userid not found: {:?}", query.userid)),
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct SendQuery {
    #[serde(default)]
    access_token: String,
}

/// `POST /cgi-bin/message/send?access_token=…`: an app message (`markdown` or `template_card`)
/// to one sandbox person, shown in their direct chat with workmate.
pub(crate) async fn message_send(
    State(state): State<AppState>,
    Query(query): Query<SendQuery>,
    body: Bytes,
) -> Json<Value> {
    if query.access_token != ACCESS_TOKEN {
        return refused(BAD_CREDENTIAL, "invalid access_token");
    }
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return refused(NOT_JSON, "the body is not JSON");
    };
    let to = body
        .get("touser")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if user_name(&to).is_none() {
        return refused(BAD_PARAMETER, format!("touser {to:?} is no sandbox person"));
    }
    match body.get("msgtype").and_then(Value::as_str) {
        Some("markdown") => {
            let text = body["markdown"]["content"].as_str().unwrap_or_default();
            if text.trim().is_empty() {
                return refused(BAD_PARAMETER, "markdown.content is empty");
            }
        }
        Some("template_card") => {
            if let Err(why) = cards::check(&body["template_card"]) {
                return refused(BAD_PARAMETER, format!("template_card: {why}"));
            }
        }
        other => {
            return refused(
                BAD_MSGTYPE,
                format!("msgtype {other:?} is not one the sandbox shows (markdown, template_card)"),
            );
        }
    }
    let msgid = state.wecom.store.push(NewMessage {
        blocks: body,
        ..NewMessage::new(&to, BOT_NAME, "")
    });
    Json(json!({ "errcode": 0, "errmsg": "ok", "msgid": msgid }))
}
