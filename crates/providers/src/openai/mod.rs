//! OpenAI-compatible Chat Completions, streamed (spec §6.3, §6.6): the gateway's `/v1` endpoint
//! and every server that speaks the same format.
//!
//! Invariant: a call sends only what the model must see (see `request`) and ends with one
//! complete turn or one error; a malformed stream is an error, never a panic or a silently
//! short answer (see `streaming`).

mod client;
mod request;
mod salvage;
mod streaming;
mod types;

pub use client::OpenAiProvider;
