//! The native Gemini client: `POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`.
//!
//! The canonical history is converted per call (spec §6.3): the system messages become the
//! `systemInstruction`, assistant turns take the role `model`, tool results become
//! `functionResponse` parts named after the call they answer (Gemini matches results by name),
//! tool schemas are reduced to the subset Gemini accepts, and call ids, which Gemini does not
//! provide, are minted here.
//!
//! # Replay state (`_gemini`)
//!
//! A reply that carried thought signatures keeps them in its message's `_gemini` sidecar:
//!
//! ```json
//! {"thought_signatures": {"<tool call id>": "<signature>"}, "text_signature": "<signature>"}
//! ```
//!
//! They are sent back on the matching `functionCall` parts (and the answer text) of later
//! requests, which Gemini 3 requires for calls of the current turn. A call Gemini did not make
//! (the session began on another model) gets Google's documented placeholder signature on
//! Gemini 3 models.
//!
//! Invariant: one request produces deltas followed by exactly one `Completed`, or an error; the
//! API key never reaches a log.

mod client;
mod request;
mod schema;
mod streaming;
mod types;

pub use client::GeminiProvider;
pub use schema::sanitize_schema;
