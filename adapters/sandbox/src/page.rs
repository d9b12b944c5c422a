//! `GET /sandbox` (the page), and what it polls: `GET /sandbox/state` (Slack),
//! `GET /sandbox/feishu/state` (Feishu), `GET /sandbox/wecom/state` (WeCom) and
//! `GET /sandbox/dingtalk/state` (DingTalk).
//!
//! Invariants: the page is self-contained: inline CSS and JS, no external asset, so it works
//! offline and leaks nothing to a CDN. The ids it speaks as and the routes it calls come from
//! the crate's constants, written into the page, so the page and the stand-ins cannot disagree.

use axum::Json;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use serde_json::{Value, json};

use crate::{AppState, BOT_USER_ID, CHANNEL_ID, USERS, dingtalk, feishu, wecom};

const PAGE: &str = include_str!("page.html");
/// Where the page takes the platforms' description.
const PLATFORMS_SLOT: &str = "__SANDBOX_PLATFORMS__";

/// Each platform as the page needs it: its routes, channel (and the name its group goes by on
/// that platform), bot and people.
fn platforms() -> Value {
    let people = |users: &[(&str, &str)]| -> Vec<Value> {
        users.iter().map(|(id, name)| json!([id, name])).collect()
    };
    json!({
        "slack": {
            "label": "Slack",
            "group": "# general",
            "state": "/sandbox/state",
            "say": "/sandbox/say",
            "click": "/sandbox/click",
            "channel": CHANNEL_ID,
            "bot": BOT_USER_ID,
            "people": people(&USERS),
        },
        "feishu": {
            "label": "Feishu",
            "group": "产品讨论群",
            "state": "/sandbox/feishu/state",
            "say": "/sandbox/feishu/say",
            "click": "/sandbox/feishu/click",
            "channel": feishu::CHAT_ID,
            "bot": feishu::BOT_OPEN_ID,
            "people": people(&feishu::USERS),
        },
        "wecom": {
            "label": "WeCom",
            "group": "产品组",
            "state": "/sandbox/wecom/state",
            "say": "/sandbox/wecom/say",
            "click": "/sandbox/wecom/click",
            "channel": wecom::CHAT_ID,
            "bot": wecom::BOT_NAME,
            "people": people(&wecom::USERS),
        },
        "dingtalk": {
            "label": "DingTalk",
            "group": "项目群",
            "state": "/sandbox/dingtalk/state",
            "say": "/sandbox/dingtalk/say",
            "click": "/sandbox/dingtalk/click",
            "channel": dingtalk::CONVERSATION_ID,
            "bot": dingtalk::BOT_NAME,
            "people": people(&dingtalk::USERS),
        },
    })
}

pub(crate) async fn page() -> impl IntoResponse {
    // `<` is escaped so nothing in the JSON can close the script element.
    let platforms = platforms().to_string().replace('<', "\\u003c");
    (
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
        ],
        PAGE.replace(PLATFORMS_SLOT, &platforms),
    )
}

pub(crate) async fn state(State(state): State<AppState>) -> Json<Value> {
    Json(state.store.snapshot())
}

pub(crate) async fn feishu_state(State(state): State<AppState>) -> Json<Value> {
    Json(state.feishu.snapshot())
}

pub(crate) async fn wecom_state(State(state): State<AppState>) -> Json<Value> {
    Json(state.wecom.snapshot())
}

pub(crate) async fn dingtalk_state(State(state): State<AppState>) -> Json<Value> {
    Json(state.dingtalk.snapshot())
}
