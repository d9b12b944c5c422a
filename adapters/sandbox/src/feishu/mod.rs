//! The Feishu stand-in: the open-platform calls `workmate-feishu`'s client makes, answered from
//! memory, and what a sandbox user says or clicks sent to workmate as Feishu sends it.
//!
//! Served under `/sandbox/feishu/open-apis`, so workmate's `api_base` is `<base>/sandbox/feishu`:
//! - `POST auth/v3/tenant_access_token/internal`: a token, for the configured app only;
//! - `GET bot/v3/info` and `GET contact/v3/users/{open_id}`: the bot and the sandbox people;
//! - `POST im/v1/messages?receive_id_type=chat_id|open_id` and `POST im/v1/messages/{id}/reply`:
//!   text, inline cards and card entities, once per `uuid`;
//! - CardKit: `POST cardkit/v1/cards`, `PUT cards/{id}` (the whole card),
//!   `PUT cards/{id}/elements/{element_id}/content` (streaming text) and
//!   `PATCH cards/{id}/settings`.
//!
//! Invariants: answers have Feishu's shapes (`{"code":0,"msg":"success","data":{…}}`, a non-zero
//! `code` when refused); every call but the token's must carry `Authorization: Bearer <token>`
//! with the token handed to the configured app, or nothing is stored; a card operation whose
//! `sequence` does not exceed the card's last one is refused with Feishu's code 300317, so a
//! sequence bug shows here as it would on Feishu. The chat and the people are fixed: one group
//! chat ([`CHAT_ID`]) and [`USERS`].

mod api;
mod cardkit;
mod cards;
mod deliver;
mod events;

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post, put};
use serde_json::{Value, json};

use crate::AppState;
use crate::store::{IdStyle, Store};

/// The group chat, shown as `# general`.
pub const CHAT_ID: &str = "oc_sandbox_general";
/// The bot's `open_id`: a mention of it addresses workmate.
pub const BOT_OPEN_ID: &str = "ou_sandbox_bot";
/// The bot's name, as mentions show it.
pub const BOT_NAME: &str = "workmate";
/// The sandbox tenant.
pub const TENANT_KEY: &str = "sandbox_tenant";
/// The sandbox people one can speak as on Feishu: `(open_id, name)`.
pub const USERS: [(&str, &str); 2] = [("ou_sandbox_alice", "Alice"), ("ou_sandbox_bob", "Bob")];
/// How long a tenant token lives, in seconds (Feishu's two hours).
const TOKEN_LIFE: u64 = 7200;
/// Idempotency keys of sent messages remembered (Feishu keeps them an hour).
const REMEMBERED_SENDS: usize = 1000;

/// The Feishu side: workmate's `[platforms.feishu]` app and secrets.
#[derive(Clone, Debug)]
pub struct FeishuSandbox {
    /// `app_id`: the only app that gets a token.
    pub app_id: String,
    /// `app_secret`: the only secret that gets a token.
    pub app_secret: String,
    /// `encrypt_key`: encrypts and signs events and card callbacks.
    pub encrypt_key: String,
    /// `verification_token`: carried in every event's header.
    pub verification_token: String,
}

/// The Feishu stand-in's memory: chats, card entities, the token it handed out and the messages
/// sent per idempotency key.
#[derive(Debug)]
pub(crate) struct Stand {
    store: Store,
    cards: cards::Cards,
    token: String,
    sent: Mutex<VecDeque<(String, String)>>,
}

impl Stand {
    pub(crate) fn new() -> Self {
        const NAMES: &[(&str, &str)] = &[
            (CHAT_ID, "general"),
            (USERS[0].0, USERS[0].1),
            (USERS[1].0, USERS[1].1),
        ];
        Self {
            store: Store::new(IdStyle::Feishu, NAMES),
            cards: cards::Cards::default(),
            token: format!("t-{}", uuid::Uuid::new_v4().simple()),
            sent: Mutex::default(),
        }
    }

    /// The message sent earlier with `uuid`, if any.
    fn sent_with(&self, uuid: &str) -> Option<String> {
        let sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        sent.iter()
            .find(|(key, _)| key == uuid)
            .map(|(_, id)| id.clone())
    }

    /// Remembers that `uuid` sent `message_id`.
    fn remember(&self, uuid: &str, message_id: &str) {
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        while sent.len() >= REMEMBERED_SENDS {
            sent.pop_front();
        }
        sent.push_back((uuid.to_owned(), message_id.to_owned()));
    }

    /// What the page shows: the chats' threads and the card entities, by `card_id`.
    pub(crate) fn snapshot(&self) -> Value {
        let mut snapshot = self.store.snapshot();
        snapshot["cards"] = self.cards.snapshot();
        snapshot
    }
}

/// The name of a sandbox person.
fn user_name(open_id: &str) -> Option<&'static str> {
    USERS
        .iter()
        .find(|(id, _)| *id == open_id)
        .map(|(_, name)| *name)
}

/// Feishu's success answer.
fn ok(data: Value) -> Response {
    let mut body = json!({ "code": 0, "msg": "success" });
    body["data"] = data;
    Json(body).into_response()
}

/// Feishu's refusal of a call: HTTP 400 with a non-zero code and a message.
#[derive(Debug)]
pub(crate) struct Refusal {
    code: i64,
    msg: String,
}

impl Refusal {
    fn new(code: i64, msg: impl Into<String>) -> Self {
        Self {
            code,
            msg: msg.into(),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({ "code": self.code, "msg": self.msg, "data": {} });
        (StatusCode::BAD_REQUEST, Json(body)).into_response()
    }
}

/// A handler's answer.
type Answer = Result<Response, Refusal>;

/// The Feishu routes, under `/sandbox/feishu`.
pub(crate) fn routes() -> Router<AppState> {
    const OPEN: &str = "/sandbox/feishu/open-apis";
    const CARDS: &str = "/sandbox/feishu/open-apis/cardkit/v1/cards";
    Router::new()
        .route("/sandbox/feishu/state", get(crate::page::feishu_state))
        .route("/sandbox/feishu/say", post(deliver::say))
        .route("/sandbox/feishu/click", post(deliver::click))
        .route(
            &format!("{OPEN}/auth/v3/tenant_access_token/internal"),
            post(api::tenant_token),
        )
        .route(&format!("{OPEN}/bot/v3/info"), get(api::bot_info))
        .route(
            &format!("{OPEN}/contact/v3/users/{{open_id}}"),
            get(api::user),
        )
        .route(&format!("{OPEN}/im/v1/messages"), post(api::send))
        .route(
            &format!("{OPEN}/im/v1/messages/{{message_id}}/reply"),
            post(api::reply),
        )
        .route(CARDS, post(cardkit::create))
        .route(&format!("{CARDS}/{{card_id}}"), put(cardkit::update))
        .route(
            &format!("{CARDS}/{{card_id}}/elements/{{element_id}}/content"),
            put(cardkit::content),
        )
        .route(
            &format!("{CARDS}/{{card_id}}/settings"),
            patch(cardkit::settings),
        )
}
