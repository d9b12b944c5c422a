//! A local stand-in for Slack: the Web API methods the adapter calls (posting and updating
//! messages, `auth.test`, `users.info` for the sandbox people), a browser page of the channel's
//! threads, and a way to speak and click as a sandbox user.
//!
//! Invariants: the fake Web API answers only the configured bot token, like Slack; everything a
//! user does on the page reaches workmate as a request signed with the configured signing secret
//! and posted to the real adapter routes, so the sandbox exercises exactly the production path.
//! Messages are kept in memory, at most [`MAX_MESSAGES_PER_CHANNEL`] per channel.

mod api;
mod deliver;
mod page;
mod store;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

pub use store::MAX_MESSAGES_PER_CHANNEL;

/// The sandbox workspace's team id.
pub const TEAM_ID: &str = "TSANDBOX";
/// The bot's user id: mentions of it address workmate.
pub const BOT_USER_ID: &str = "UBOT";
/// The bot id (`auth.test`).
pub const BOT_ID: &str = "BSANDBOX";
/// The one channel, shown as `#general`.
pub const CHANNEL_ID: &str = "CGENERAL";
/// The sandbox users one can speak as: `(id, name)`.
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
}

/// Crate-wide result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How the sandbox talks to workmate.
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// Signs the events and clicks sent to workmate (workmate's `[platforms.slack]
    /// signing_secret`).
    pub signing_secret: String,
    /// The only token the fake Web API accepts.
    pub bot_token: String,
    /// Where workmate serves, for example `http://127.0.0.1:8080`.
    pub workmate_base: String,
}

#[derive(Debug)]
struct Shared {
    config: SandboxConfig,
    store: store::Store,
    http: reqwest::Client,
}

type AppState = Arc<Shared>;

/// The sandbox's routes, all under `/sandbox`.
pub fn router(config: SandboxConfig) -> Result<Router> {
    let http = deliver::client()?;
    let state = Arc::new(Shared {
        config,
        store: store::Store::default(),
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
        .with_state(state))
}
