//! Feishu / Lark adapter: everything that knows Feishu's wire format.
//!
//! Invariant: nothing inbound reaches the chat layer unless [`crypto`] verified (and, with an
//! Encrypt Key, decrypted) it first, or it came over the long connection opened with the app's
//! credentials. [`config`] is the `[platforms.feishu]` section and its validation. Nothing here
//! knows a tenant, a session or a role.

pub mod card;
pub mod config;
mod connection;
pub mod crypto;
mod describe;
mod dispatch;
pub mod inbound;
pub mod mapping;
mod platform;
pub mod web;
pub mod webhook;
pub mod ws;
pub use connection::FeishuConnection;
pub use describe::FEISHU;
pub use dispatch::{click_response, dispatch};
pub use platform::FeishuPlatform;
