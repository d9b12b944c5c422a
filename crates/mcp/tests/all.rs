//! The MCP client against the official servers from npm (`tests/mcp/`, installed by
//! `npm ci` there; `bash .ci/run` does it): stdio in the exec sandbox, and streamable HTTP; and
//! a server people sign in to (a small fake, behind OAuth).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod everything;
mod filesystem;
mod http;
mod oauth;
mod operator;
mod registry;
mod support;
