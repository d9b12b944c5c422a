//! The connectors against wiremock fakes of the real REST shapes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod github;
mod jira;
mod support;
