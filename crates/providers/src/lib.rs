//! Model providers: one streaming trait, the clients behind it, and the router that picks one from
//! a `provider:model` id.
//!
//! Invariant: a provider never blocks the engine. It streams into a bounded channel
//! ([`ModelStream`]); the engine races every read against the turn's interrupt, and a provider whose
//! consumer went away stops at its next send.

mod model;
mod stream;

pub use model::{
    AssistantTurn, Capabilities, FinishReason, ModelProvider, ModelRequest, ProviderError,
    ProviderErrorKind, StreamEvent,
};
pub use stream::{ModelStream, StreamSender};
