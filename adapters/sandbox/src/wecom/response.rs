//! `POST /sandbox/wecom/response/{msgid}`: a message's `response_url`, which takes one further
//! answer to that message: a `template_card` (an approval) or `markdown` (the rest of a long
//! answer), shown in the message's thread.
//!
//! Answers have WeCom's shape, always HTTP 200: `{"errcode":0,"errmsg":"ok"}`, or a non-zero
//! `errcode` with what was wrong. The codes are from WeCom's global table: 47001 (not JSON),
//! 40008 (a message type the URL does not take), 40058 (a bad parameter: an unknown URL, a card
//! WeCom would not show, empty markdown) and 45009 (the URL already took its answer).
//!
//! Invariant: an answer is stored only when it is the first for a message a sandbox person sent
//! in the chat and its content is one WeCom shows; a refused answer leaves the URL unused.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use serde_json::{Value, json};

use super::{BAD_MSGTYPE, BAD_PARAMETER, BOT_NAME, CHAT_ID, NOT_JSON, cards, refused, user_name};
use crate::AppState;
use crate::store::NewMessage;

/// The URL already took its answer.
const USED: i64 = 45_009;

/// What the answer shows, or why WeCom would refuse it.
fn content(body: &Value) -> Result<(), (i64, String)> {
    match body.get("msgtype").and_then(Value::as_str) {
        Some("template_card") => {
            let card = body.get("template_card").unwrap_or(&Value::Null);
            cards::check(card).map_err(|why| (BAD_PARAMETER, format!("template_card: {why}")))
        }
        Some("markdown") => {
            let text = body
                .get("markdown")
                .and_then(|m| m.get("content"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if text.trim().is_empty() {
                return Err((BAD_PARAMETER, "markdown.content is empty".into()));
            }
            Ok(())
        }
        other => Err((
            BAD_MSGTYPE,
            format!("msgtype {other:?} is not one a response_url takes (template_card, markdown)"),
        )),
    }
}

pub(crate) async fn response_url(
    State(state): State<AppState>,
    Path(msgid): Path<String>,
    body: Bytes,
) -> Json<Value> {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return refused(NOT_JSON, "the body is not JSON");
    };
    let wecom = &state.wecom;
    let asked = wecom
        .store
        .get(CHAT_ID, &msgid)
        .filter(|m| m.thread_ts.is_none() && user_name(&m.user).is_some());
    if asked.is_none() {
        return refused(
            BAD_PARAMETER,
            format!("invalid response_url: no message {msgid:?}"),
        );
    }
    if let Err((errcode, errmsg)) = content(&body) {
        return refused(errcode, errmsg);
    }
    if !wecom.answer_once(&msgid) {
        return refused(
            USED,
            "this response_url was used already: it takes one answer",
        );
    }
    wecom.store.push(NewMessage {
        thread: Some(msgid),
        blocks: body,
        ..NewMessage::new(CHAT_ID, BOT_NAME, "")
    });
    Json(json!({ "errcode": 0, "errmsg": "ok" }))
}
