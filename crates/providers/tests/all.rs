//! The providers' integration tests: the scripted provider driven through the `ModelProvider`
//! trait, as the engine drives it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod anthropic;
mod gemini;
mod openai;
mod scripted;
mod support;
