//! A local stand-in for Slack, Feishu, WeCom and DingTalk: the platform APIs the adapters call, a
//! browser page of each platform's threads (pick Slack, Feishu, WeCom or DingTalk on the page),
//! and a way to speak and click as a sandbox user.
//!
//! - Slack: the Web API methods the adapter calls (posting and updating messages, `auth.test`,
//!   `users.info` for the sandbox people) under `/sandbox/api`; what a user does is sent as a
//!   signed Events API or `block_actions` request.
//! - Feishu: the open platform under `/sandbox/feishu/open-apis` (the tenant token, messages and
//!   replies, CardKit card entities, the bot and the sandbox people; see [`feishu`]); what a user
//!   does is sent as an encrypted, signed `im.message.receive_v1` event or `card.action.trigger`
//!   callback, and the callback's answer (toast and card) is applied as Feishu applies it.
//! - WeCom: the smart robot in callback mode (see [`wecom`]): what a user does is sent as an
//!   encrypted, signed message or `template_card_event` callback; the sealed passive replies are
//!   applied as WeCom applies them (a stream followed every second in the message's bubble, a
//!   card updated for everyone), and each message's `response_url` takes one further answer.
//! - DingTalk: the open platform under `/sandbox/dingtalk/v1.0` (the access token, interactive
//!   and AI cards, robot messages; see [`dingtalk`]); what a user does is sent to workmate's
//!   HTTP-mode routes as a signed robot callback or card callback, and a click's answer becomes
//!   the clicker's view of the card.
//!
//! Invariants: each fake API answers only the configured credentials, like the platform; everything
//! a user does on the page reaches workmate signed (and, for Feishu and WeCom, encrypted) with
//! the configured secrets and posted to the real adapter routes, so the sandbox exercises exactly
//! the production path. Messages are kept in memory, at most [`MAX_MESSAGES_PER_CHANNEL`] per
//! channel.

mod api;
mod deliver;
pub mod dingtalk;
pub mod feishu;
mod page;
mod store;
pub mod wecom;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

pub use dingtalk::DingTalkSandbox;
pub use feishu::FeishuSandbox;
pub use store::MAX_MESSAGES_PER_CHANNEL;
pub use wecom::WeComSandbox;

/// The sandbox workspace's team id.
pub const TEAM_ID: &str = "TSANDBOX";
/// The bot's user id: mentions of it address workmate.
pub const BOT_USER_ID: &str = "UBOT";
/// The bot id (`auth.test`).
pub const BOT_ID: &str = "BSANDBOX";
/// The one channel, shown as `#general`.
pub const CHANNEL_ID: &str = "CGENERAL";
/// The sandbox users one can speak as on Slack: `(id, name)`.
pub const USERS: [(&str, &str); 2] = [("U1", "Alice"), ("U2", "Bob")];

/// Every way a sandbox action can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The HTTP client could not be set up.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    /// The request names something the sandbox does not know.
    #[error("{0}")]
    BadRequest(String),
    /// workmate could not be reached.
    #[error("cannot reach workmate: {0}")]
    Deliver(#[from] reqwest::Error),
    /// workmate answered a card callback with something Feishu would not take.
    #[error("workmate's answer to the card callback is not what Feishu takes: {0}")]
    BadAnswer(String),
    /// workmate answered a WeCom callback with something WeCom would not take.
    #[error("workmate's answer to the WeCom callback is not what WeCom takes: {0}")]
    WeComAnswer(String),
    /// workmate answered a DingTalk card callback with something DingTalk would not take.
    #[error("workmate's answer to the DingTalk card callback is not what DingTalk takes: {0}")]
    DingTalkAnswer(String),
    /// The sandbox's configuration cannot be used.
    #[error("the sandbox's configuration cannot be used: {0}")]
    Config(String),
}

/// Crate-wide result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The Slack side: workmate's `[platforms.slack]` secrets.
#[derive(Clone, Debug)]
pub struct SlackSandbox {
    /// Signs the events and clicks sent to workmate (`signing_secret`).
    pub signing_secret: String,
    /// The only token the fake Web API accepts (`bot_token`).
    pub bot_token: String,
}

/// How the sandbox talks to workmate.
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// Where workmate serves, for example `http://127.0.0.1:8080`.
    pub workmate_base: String,
    /// The Slack stand-in's secrets.
    pub slack: SlackSandbox,
    /// The Feishu stand-in's app and secrets.
    pub feishu: FeishuSandbox,
    /// The WeCom stand-in's corp and callback secrets.
    pub wecom: WeComSandbox,
    /// The DingTalk stand-in's app (HTTP mode).
    pub dingtalk: DingTalkSandbox,
}

#[derive(Debug)]
struct Shared {
    config: SandboxConfig,
    /// Slack's channels.
    store: store::Store,
    /// Feishu's chats and card entities.
    feishu: feishu::Stand,
    /// WeCom's chat, callback crypto and response URLs.
    wecom: wecom::Stand,
    /// DingTalk's chats, cards and access token.
    dingtalk: dingtalk::Stand,
    http: reqwest::Client,
}

type AppState = Arc<Shared>;

/// The sandbox's routes, all under `/sandbox`.
pub fn router(config: SandboxConfig) -> Result<Router> {
    let http = deliver::client()?;
    let wecom = wecom::Stand::new(&config.wecom)?;
    let state = Arc::new(Shared {
        config,
        store: store::Store::new(store::IdStyle::Slack, &[(CHANNEL_ID, "general")]),
        feishu: feishu::Stand::new(),
        wecom,
        dingtalk: dingtalk::Stand::new(),
        http,
    });
    Ok(Router::new()
        .route("/sandbox", get(page::page))
        .route("/sandbox/state", get(page::state))
        .route("/sandbox/say", post(deliver::say))
        .route("/sandbox/click", post(deliver::click))
        .route("/sandbox/api/chat.postMessage", post(api::post_message))
        .route("/sandbox/api/chat.update", post(api::update))
        .route("/sandbox/api/chat.postEphemeral", post(api::post_ephemeral))
        .route("/sandbox/api/auth.test", post(api::auth_test))
        .route(
            "/sandbox/api/users.info",
            get(api::users_info).post(api::users_info),
        )
        .merge(feishu::routes())
        .merge(wecom::routes())
        .merge(dingtalk::routes())
        .with_state(state))
}
