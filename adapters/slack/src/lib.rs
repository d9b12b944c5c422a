//! Slack adapter: everything that knows Slack's wire format.
//!
//! Invariant: no inbound byte reaches the engine unless [`verify_request`] accepted it first, and
//! every decoder here works on those same raw bytes. So far this crate holds the pure pieces
//! (signing and decoding); the HTTP routes and the outbound client build on them.

pub mod inbound;
pub mod verify;

pub use inbound::{
    Action, BlockActions, Container, DecodeError, Event, EventCallback, EventEnvelope, Interaction,
    InteractionChannel, InteractionMessage, InteractionTeam, InteractionUser, MessageEvent,
    SlashCommand, TextObject, decode_event_envelope, decode_interaction, decode_slash_command,
};
pub use verify::{MAX_CLOCK_SKEW_SECS, VerifyError, sign, verify_request};

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
}

/// Crate-wide result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
