//! Slack adapter: everything that knows Slack's wire format.
//!
//! Invariant: no inbound byte reaches the engine unless [`verify_request`] accepted it first, and
//! every decoder here works on those same raw bytes, and [`mapping`] turns what they decode into
//! the chat layer's neutral deliveries. Outbound, [`blocks`] turns a card into Block Kit within
//! Slack's limits and [`SlackPlatform`] posts, updates and notifies through [`web`]. Socket Mode
//! is a [`SlackConnection`]. [`config`] is the `[platforms.slack]` section and its validation.
//! Nothing here knows a tenant, a session or a role.

pub mod blocks;
pub mod config;
mod connection;
mod describe;
pub mod inbound;
pub mod mapping;
mod platform;
pub mod socket;
pub mod verify;
pub mod web;

pub use connection::SlackConnection;
pub use describe::SLACK;
pub use platform::SlackPlatform;

pub use inbound::{
    Action, BlockActions, Container, DecodeError, Event, EventCallback, EventEnvelope, Interaction,
    InteractionChannel, InteractionMessage, InteractionTeam, InteractionUser, MessageEvent,
    SlashCommand, TextObject, decode_event_envelope, decode_interaction, decode_slash_command,
};
pub use socket::{Backoff, Handled, SocketHandler, SocketInbound, SocketMode};
pub use verify::{MAX_CLOCK_SKEW_SECS, VerifyError, sign, verify_request};
pub use web::{AuthInfo, PostedMessage, RetryPolicy, SlackWeb, UserInfo, WebError};

/// Every way this crate can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request is not signed by Slack (or is too old).
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The request is signed but its body is not what Slack sends.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A Web API call failed.
    #[error(transparent)]
    Web(#[from] WebError),
}

/// Crate-wide result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
