//! Model providers: one streaming trait, the clients behind it, and the router that picks one from
//! a `provider:model` id.
//!
//! Invariant: a provider never blocks the engine. It streams into a bounded channel
//! ([`ModelStream`]); the engine races every read against the turn's interrupt, and a provider whose
//! consumer went away stops at its next send.

pub mod anthropic;
pub mod capabilities;
mod connect;
mod errors;
pub mod gemini;
mod http;
mod model;
pub mod openai;
mod router;
mod scripted;
mod settings;
mod stream;

pub use anthropic::AnthropicProvider;
pub use connect::connect;
pub use errors::{friendly_error, is_context_overflow, is_quota};
pub use gemini::GeminiProvider;
pub use model::{
    AssistantTurn, Capabilities, FinishReason, ModelProvider, ModelRequest, ProviderError,
    ProviderErrorKind, StreamEvent,
};
pub use openai::OpenAiProvider;
pub use router::ProviderRouter;
pub use scripted::{ScriptError, ScriptedProvider};
pub use settings::{CapabilityOverrides, ProviderKind, ProviderSettings};
pub use stream::{ModelStream, StreamSender};
