//! The connectors against wiremock fakes of the real REST shapes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod confluence;
mod contract;
mod dingtalk_docs;
mod egress;
mod feishu;
mod github;
mod gitlab;
mod google;
mod jira;
mod notion;
mod support;
