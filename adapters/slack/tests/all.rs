//! The Slack adapter's integration tests, as one binary (CONVENTIONS.md: linking stays cheap):
//! the SDK-produced vectors, the protocol's edge cases, and property tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod commands;
mod events;
mod fixtures;
mod interaction;
mod props;
mod signature;
