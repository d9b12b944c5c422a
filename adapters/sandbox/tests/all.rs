//! The sandbox's integration tests, as one binary: the fake Web API against Slack's shapes, signed
//! events and clicks received by a recording stand-in for workmate, and the self-contained page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod api;
mod deliver;
mod page;
mod support;
