//! The provider contract: what a model call takes and what it streams back.

use std::fmt;
use std::time::Duration;

use workmate_protocol::{Message, ProviderState, SessionId, TokenUsage, ToolCall, ToolSpec};

use crate::ModelStream;

/// One model call.
#[derive(Clone, Debug)]
pub struct ModelRequest {
    /// The session calling (providers that keep per-session state, like the scripted one, key it
    /// by this).
    pub session_id: SessionId,
    /// The model id with the provider prefix removed.
    pub model: String,
    /// The outbound view of the history: notices dropped, display-only sidecars stripped.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    #[default]
    Stop,
    /// It wants tools run.
    ToolCalls,
    /// It hit the output-token limit (tool-call arguments may be cut off).
    Length,
    /// A safety filter stopped it.
    ContentFilter,
}

/// A complete model reply: the last event of a successful stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssistantTurn {
    /// The answer text (empty when the reply is only tool calls).
    pub text: String,
    /// Reasoning text, when the model exposes it (display-only).
    pub reasoning: Option<String>,
    /// Tool calls, arguments parsed (`{"_raw": text}` when they were not a JSON object).
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub finish_reason: FinishReason,
    /// Tokens spent, when reported.
    pub usage: Option<TokenUsage>,
    /// Provider-private replay data to keep with the message.
    pub provider_state: ProviderState,
}

/// One item of a model stream.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "one `Completed` per stream; boxing it would change the contract the engine matches on"
)]
pub enum StreamEvent {
    /// A piece of the answer text.
    TextDelta(String),
    /// A piece of the reasoning text.
    ReasoningDelta(String),
    /// The whole reply; the stream ends after it.
    Completed(AssistantTurn),
}

/// What a model can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// It can call tools.
    pub tools: bool,
    /// It can read images.
    pub vision: bool,
    /// It can read PDF documents.
    pub pdf: bool,
    /// Its context window, in tokens.
    pub context_window: u32,
}

impl Default for Capabilities {
    fn default() -> Self {
        Self {
            tools: true,
            vision: false,
            pdf: false,
            context_window: 128_000,
        }
    }
}

/// What kind of failure a provider reports; the engine and the gateway policy act on the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderErrorKind {
    /// The backend is overloaded or failing (5xx, timeouts): another model may work.
    Unavailable,
    /// Too many requests; retry after `retry_after`.
    RateLimited,
    /// The account is out of quota or budget.
    Quota,
    /// The credentials are missing or refused, or the model is not accessible.
    Access,
    /// The prompt is larger than the model's context window.
    ContextOverflow,
    /// The request was malformed or refused for its content.
    BadRequest,
    /// Anything else.
    Other,
}

/// A failed model call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// What kind of failure it is.
    pub kind: ProviderErrorKind,
    /// The text to show (already friendly where possible).
    pub message: String,
    /// When the backend said to come back.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    /// A failure of the given kind with a message.
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The short name of the kind, for the `error_type` of an `error` event.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            ProviderErrorKind::Unavailable => "provider_unavailable",
            ProviderErrorKind::RateLimited => "rate_limited",
            ProviderErrorKind::Quota => "quota_exceeded",
            ProviderErrorKind::Access => "access_denied",
            ProviderErrorKind::ContextOverflow => "context_overflow",
            ProviderErrorKind::BadRequest => "bad_request",
            ProviderErrorKind::Other => "provider_error",
        }
    }
}

/// A model backend. Implementations stream a reply into a [`ModelStream`] from a task of their
/// own and stop when the stream's consumer goes away.
pub trait ModelProvider: Send + Sync + fmt::Debug {
    /// What `model` (without the provider prefix) can take.
    fn capabilities(&self, model: &str) -> Capabilities;

    /// Starts one model call. Never blocks: failures arrive on the stream.
    fn stream(&self, request: ModelRequest) -> ModelStream;
}
