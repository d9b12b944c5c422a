//! The WeCom adapter's tests, one binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly on a broken expectation"
)]

mod app;
mod callback;
mod cards;
mod files;
mod inbound;
mod limits;
mod mapping;
mod ws;
