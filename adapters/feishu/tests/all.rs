//! The Feishu adapter's integration tests, as one binary: the SDK-produced vectors, decoding
//! and mapping, every card state as Card JSON 2.0 (snapshots) within Feishu's limits, the
//! open-platform client against a fake Feishu, and the long connection against a test server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cards;
mod files;
mod limits;
mod platform;
mod vectors;
mod ws;
