//! The sandbox's integration tests, as one binary: the fake Web API against Slack's shapes, the
//! Feishu stand-in against Feishu's (tokens, CardKit sequences), signed (and, for Feishu,
//! encrypted) events and clicks received by a recording stand-in for workmate, and the
//! self-contained page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod api;
mod deliver;
mod feishu_api;
mod feishu_deliver;
mod page;
mod support;
