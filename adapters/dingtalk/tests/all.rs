//! The DingTalk adapter's tests, one binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly on a broken expectation"
)]

mod card;
mod connection;
mod files;
mod inbound;
mod platform;
mod render;
mod sign;
mod stream;
mod support;
mod web;
