//! The native Anthropic Messages client: the canonical history converted per call (§6.3), the
//! reply streamed over Server-Sent Events (§6.6).
//!
//! Invariant: what reaches Anthropic is built fresh from the history on every call (system
//! extracted, tool results merged, cache breakpoints added) and nothing of that conversion is
//! written back; what comes back for replay is only the thinking blocks, in `_anthropic`.

mod client;
mod request;
mod streaming;
mod types;

pub use client::AnthropicProvider;
