//! The DingTalk stand-in: the open-platform calls `workmate-dingtalk`'s client makes, answered
//! from memory, and what a sandbox person says or clicks posted to workmate's HTTP-mode routes,
//! signed as DingTalk signs them.
//!
//! Served under `/sandbox/dingtalk`, which is workmate's `api_base`:
//! - `POST /v1.0/oauth2/accessToken`: a token, for the configured app only ([`api`]);
//! - `POST /v1.0/card/instances/createAndDeliver`: a card from a template, delivered into the
//!   group or a person's chat with the robot; `PUT /v1.0/card/instances`: a card's shared data
//!   (by key, or whole); `PUT /v1.0/card/streaming`: an AI card's streamed `content`, finalized
//!   or failed ([`cards`]);
//! - `POST /v1.0/robot/groupMessages/send` and `POST /v1.0/robot/oToMessages/batchSend`: the
//!   robot's text and markdown messages.
//!
//! What a person says is a robot callback posted to `/v1/platforms/dingtalk/robot`, signed with
//! `timestamp` and `sign`; a click on an approval card's button is a card callback posted to
//! `/v1/platforms/dingtalk/card`, signed with `x-ddpaas-signature-timestamp` and
//! `x-ddpaas-signature`, and its answer's `cardData` becomes the clicker's private view of the
//! card ([`deliver`]).
//!
//! Invariants: answers have DingTalk's shapes (a refusal is a non-2xx status with
//! `{"code","message","requestid"}`); every call but the token's must carry
//! `x-acs-dingtalk-access-token` with the token handed to the configured app, or nothing is
//! stored; every `cardParamMap` value is a string, or the call is refused; a card whose template
//! is the configured approval template is drawn as the approval template, any other as the AI
//! answer card; a click sends a choice the stored card shows a button for (pending, listed in
//! `choices`), never one the page makes up. The group and the people are fixed: one group
//! ([`CONVERSATION_ID`]) and [`USERS`]. DingTalk has no threads: each message is its own thread
//! on the page.

mod api;
mod cards;
mod deliver;

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::json;

use crate::AppState;
use crate::store::{IdStyle, Store};

/// The group's open conversation id, shown as `# general`.
pub const CONVERSATION_ID: &str = "cidSandboxGeneral==";
/// The organisation the robot and the sandbox people belong to (`chatbotCorpId`).
pub const CORP_ID: &str = "dingsandboxcorp";
/// The robot's name, as mentions show it; also the sender of its messages on the page.
pub const BOT_NAME: &str = "workmate";
/// The sandbox people one can speak as on DingTalk: `(staff id, name)`.
pub const USERS: [(&str, &str); 2] = [("staff_alice", "Alice"), ("staff_bob", "Bob")];
/// How long an access token lives, in seconds (DingTalk's two hours).
const TOKEN_LIFE: u64 = 7200;

/// The DingTalk side: workmate's `[platforms.dingtalk]` app (HTTP mode).
#[derive(Clone, Debug)]
pub struct DingTalkSandbox {
    /// `client_id`: the app's Client ID (AppKey), also its robot code.
    pub client_id: String,
    /// `client_secret`: gets the access token and signs the robot and card callbacks.
    pub client_secret: String,
    /// `card_template_id`: the approval card's template; other cards are AI answer cards.
    pub card_template_id: String,
}

/// The DingTalk stand-in's memory: the chats' messages, the cards by `outTrackId`, and the
/// access token it hands out.
#[derive(Debug)]
pub(crate) struct Stand {
    store: Store,
    cards: cards::Cards,
    token: String,
}

impl Stand {
    pub(crate) fn new() -> Self {
        const NAMES: &[(&str, &str)] = &[
            (CONVERSATION_ID, "general"),
            (USERS[0].0, USERS[0].1),
            (USERS[1].0, USERS[1].1),
        ];
        Self {
            store: Store::new(IdStyle::DingTalk, NAMES),
            cards: cards::Cards::default(),
            token: uuid::Uuid::new_v4().simple().to_string(),
        }
    }

    /// What the page shows: the chats' messages and the cards, by `outTrackId`.
    pub(crate) fn snapshot(&self) -> serde_json::Value {
        let mut snapshot = self.store.snapshot();
        snapshot["cards"] = self.cards.snapshot();
        snapshot
    }
}

/// The name of a sandbox person.
fn user_name(staff_id: &str) -> Option<&'static str> {
    USERS
        .iter()
        .find(|(id, _)| *id == staff_id)
        .map(|(_, name)| *name)
}

/// DingTalk's refusal of a call: a non-2xx status with a code and a message.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// A parameter DingTalk does not take (HTTP 400).
    fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "param.invalid", message)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({
            "code": self.code,
            "message": self.message,
            "requestid": uuid::Uuid::new_v4().simple().to_string(),
        });
        (self.status, Json(body)).into_response()
    }
}

/// A handler's answer.
type Answer = Result<Response, Refusal>;

/// The DingTalk routes, under `/sandbox/dingtalk`.
pub(crate) fn routes() -> Router<AppState> {
    const API: &str = "/sandbox/dingtalk/v1.0";
    Router::new()
        .route("/sandbox/dingtalk/state", get(crate::page::dingtalk_state))
        .route("/sandbox/dingtalk/say", post(deliver::say))
        .route("/sandbox/dingtalk/click", post(deliver::click))
        .route(
            &format!("{API}/oauth2/accessToken"),
            post(api::access_token),
        )
        .route(
            &format!("{API}/card/instances/createAndDeliver"),
            post(api::create_and_deliver),
        )
        .route(&format!("{API}/card/instances"), put(api::update_card))
        .route(&format!("{API}/card/streaming"), put(api::stream))
        .route(
            &format!("{API}/robot/groupMessages/send"),
            post(api::group_send),
        )
        .route(
            &format!("{API}/robot/oToMessages/batchSend"),
            post(api::batch_send),
        )
}
