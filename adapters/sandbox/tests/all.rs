//! The sandbox's integration tests, as one binary: the fake Web API against Slack's shapes, the
//! Feishu stand-in against Feishu's (tokens, CardKit sequences), the WeCom stand-in against
//! WeCom's (response URLs, streams, card updates), the DingTalk stand-in against DingTalk's
//! (tokens, cards by `outTrackId`, AI card streaming, robot messages), signed (and, for Feishu
//! and WeCom, encrypted) events and clicks received by a recording stand-in for workmate, and the
//! self-contained page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod api;
mod deliver;
mod dingtalk_api;
mod dingtalk_deliver;
mod feishu_api;
mod feishu_deliver;
mod page;
mod support;
mod wecom_app;
mod wecom_deliver;
mod wecom_response;
mod wecom_stub;
