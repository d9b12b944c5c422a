//! DingTalk (钉钉): its wire format, and nothing else.
//!
//! - [`config`]: the `[platforms.dingtalk]` section and its validation.
//! - [`web`]: the open-platform client: the access token, robot messages, cards created,
//!   updated for everyone and streamed.
//! - [`DingTalkPlatform`]: the chat layer's calls (render, post, update, notices) on DingTalk.
//! - [`DingTalkConnection`]: the Stream connection as the chat layer's long-lived connection;
//!   [`dispatch`] is what it (and the HTTP routes) do with one robot message or card click.
//! - [`card`]: the interactive-card templates' variables (the approval card's `cardParamMap`), the
//!   choice a button click carries, and the answer card's markdown.
//! - [`inbound`]: typed decoding of the robot's message callback (Stream or HTTP, the same JSON).
//! - [`mapping`]: those messages as the chat layer's neutral [`workmate_adapter::Inbound`]s.
//! - [`sign`]: the robot signature, `base64(HMAC-SHA256(secret, timestamp_ms + "\n" + secret))`,
//!   which signs a custom robot's webhook URL and the `timestamp`/`sign` headers DingTalk puts on
//!   a robot's HTTP callback.
//! - [`stream`]: the Stream mode client: a WebSocket the app opens, over which DingTalk pushes
//!   events, robot messages and card callbacks, each acked with its handler's answer.
//!
//! The encrypted event push uses the crypto DingTalk shares with WeCom (`workmate-wxcrypto`).
//!
//! Invariant: nothing here decides authority, sessions or tenants, stores anything or calls the
//! engine (see the chat layer); nothing inbound reaches the chat layer unless it came over the
//! Stream connection opened with the app's credentials or passed [`sign`]'s checks.

pub mod card;
pub mod config;
mod connection;
mod describe;
pub mod dispatch;
pub mod inbound;
pub mod mapping;
mod platform;
pub mod sign;
pub mod stream;
pub mod web;

pub use connection::DingTalkConnection;
pub use describe::DINGTALK;
pub use platform::{ANSWER_BUDGET, DingTalkConfig, DingTalkPlatform, MIN_UPDATE_INTERVAL};
