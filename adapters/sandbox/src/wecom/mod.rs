//! The WeCom stand-in: the smart robot (智能机器人) in callback mode, as WeCom plays it.
//!
//! - What a sandbox person says is an encrypted, signed message callback posted to workmate's
//!   `/v1/platforms/wecom/callback`; workmate's sealed passive reply opens a *stream*, which the
//!   sandbox then asks for again about every second, as WeCom does, showing each answer's
//!   content in that message's bubble until it says `finish` (or six minutes have passed)
//!   ([`stream`]).
//! - Each message carries a `response_url`, served here at
//!   `/sandbox/wecom/response/{msgid}`: it takes one further answer (a `template_card`, such as
//!   an approval, or `markdown`, the rest of a long answer), shown in the message's thread
//!   ([`response`]).
//! - A click on a card's button is an encrypted, signed `template_card_event` callback; a sealed
//!   `update_template_card` answer replaces every card with that `task_id`, for everyone; an
//!   empty answer changes nothing ([`deliver`]).
//!
//! - The self-built app beside the robot gives workmate people's names and takes its messages
//!   to one person (a private notice, an approver's copy), shown as that person's direct chat
//!   with workmate ([`app`]).
//!
//! The robot answers only through streams and response URLs, which point at `workmate_base`,
//! where the sandbox is served beside workmate; the app's API is served there too.
//!
//! Invariants: every callback is encrypted for the smart robot (receive id empty) with the
//! configured EncodingAESKey and signed with the configured Token, and every passive reply is
//! opened only when workmate's signature over it verifies; a `response_url` belongs to a message
//! a sandbox person sent and takes one answer; a click sends a key the stored card holds, never
//! one from the page. The chat and the people are fixed: one group chat ([`CHAT_ID`]) and
//! [`USERS`]. WeCom has no threads: a message's thread on the page is the message and what
//! answered it.

mod app;
mod callbacks;
mod cards;
mod deliver;
mod response;
mod stream;

use std::collections::VecDeque;
use std::sync::atomic::AtomicUsize;
use std::sync::{Mutex, PoisonError};

use axum::Router;
use axum::routing::{get, post};
use workmate_wxcrypto::Crypto;

use crate::store::{IdStyle, Store};
use crate::{AppState, Error, MAX_MESSAGES_PER_CHANNEL, Result};

/// The group chat's `chatid`, shown as `# general`.
pub const CHAT_ID: &str = "wr_sandbox_general";
/// The smart robot's `aibotid`.
pub const AIBOT_ID: &str = "aib_sandbox_workmate";
/// The robot's name, as mentions show it; also the sender of its messages on the page.
pub const BOT_NAME: &str = "workmate";
/// The sandbox people one can speak as on WeCom: `(userid, name)`.
pub const USERS: [(&str, &str); 2] = [("zhangsan", "张三"), ("lisi", "李四")];
/// The smart robot's receive id: internal smart robots encrypt for the empty string.
const RECEIVE_ID: &str = "";

/// The WeCom side: workmate's `[platforms.wecom]` secrets (callback mode).
#[derive(Clone, Debug)]
pub struct WeComSandbox {
    /// `corp_id`: the corp the sandbox people belong to.
    pub corp_id: String,
    /// `token`: signs the callbacks and workmate's replies.
    pub token: String,
    /// `encoding_aes_key`: 43 characters; encrypts the callbacks and workmate's replies.
    pub encoding_aes_key: String,
    /// The self-built app's `secret`: its token reads people's names and sends them messages.
    pub app_secret: String,
}

/// The WeCom stand-in's memory: the chat's messages, the callback crypto, the response URLs
/// already answered through and how many streams are being followed.
#[derive(Debug)]
pub(crate) struct Stand {
    store: Store,
    crypto: Crypto,
    /// The corp the sandbox people belong to.
    corp_id: String,
    /// The self-built app's secret.
    app_secret: String,
    /// The `msgid`s whose `response_url` took its answer, oldest first.
    answered: Mutex<VecDeque<String>>,
    /// Streams being refreshed now.
    following: AtomicUsize,
}

impl Stand {
    /// The stand-in for `config`; an error when its EncodingAESKey is not one.
    pub(crate) fn new(config: &WeComSandbox) -> Result<Self> {
        // The group, and each person's direct chat with the app.
        const NAMES: &[(&str, &str)] = &[
            (CHAT_ID, "general"),
            (USERS[0].0, USERS[0].1),
            (USERS[1].0, USERS[1].1),
        ];
        let crypto = Crypto::new(&config.token, &config.encoding_aes_key, RECEIVE_ID)
            .map_err(|e| Error::Config(format!("WeCom: {e}")))?;
        Ok(Self {
            store: Store::new(IdStyle::WeCom, NAMES),
            crypto,
            corp_id: config.corp_id.clone(),
            app_secret: config.app_secret.clone(),
            answered: Mutex::default(),
            following: AtomicUsize::new(0),
        })
    }

    /// Records that `msgid`'s response URL took its answer; `false` if it had already.
    fn answer_once(&self, msgid: &str) -> bool {
        let mut answered = self.answered.lock().unwrap_or_else(PoisonError::into_inner);
        if answered.iter().any(|m| m == msgid) {
            return false;
        }
        // A message this old has left the chat (the store keeps as many), so its response URL
        // is refused as unknown anyway.
        while answered.len() >= MAX_MESSAGES_PER_CHANNEL {
            answered.pop_front();
        }
        answered.push_back(msgid.to_owned());
        true
    }

    /// What the page shows: the chat's threads.
    pub(crate) fn snapshot(&self) -> serde_json::Value {
        self.store.snapshot()
    }
}

/// WeCom's code for a body that is not JSON.
const NOT_JSON: i64 = 47_001;
/// WeCom's code for a message type the call does not take.
const BAD_MSGTYPE: i64 = 40_008;
/// WeCom's code for a wrong parameter.
const BAD_PARAMETER: i64 = 40_058;

/// WeCom's refusal: HTTP 200 with a non-zero `errcode` and what was wrong, logged.
fn refused(errcode: i64, errmsg: impl Into<String>) -> axum::Json<serde_json::Value> {
    let errmsg = errmsg.into();
    tracing::warn!(errcode, %errmsg, "The sandbox's WeCom refused a call.");
    axum::Json(serde_json::json!({ "errcode": errcode, "errmsg": errmsg }))
}

/// The name of a sandbox person.
fn user_name(userid: &str) -> Option<&'static str> {
    USERS
        .iter()
        .find(|(id, _)| *id == userid)
        .map(|(_, name)| *name)
}

/// The WeCom routes, under `/sandbox/wecom`.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/sandbox/wecom/state", get(crate::page::wecom_state))
        .route("/sandbox/wecom/say", post(deliver::say))
        .route("/sandbox/wecom/click", post(deliver::click))
        .route(
            "/sandbox/wecom/response/{msgid}",
            post(response::response_url),
        )
        .route("/sandbox/wecom/cgi-bin/gettoken", get(app::gettoken))
        .route("/sandbox/wecom/cgi-bin/user/get", get(app::user_get))
        .route(
            "/sandbox/wecom/cgi-bin/message/send",
            post(app::message_send),
        )
}
