//! Security tests: each exploit the hardening review found, replayed end to end against workmate
//! as an attacker inside a customer's chat would try it. Every one of them must fail.
//!
//! They live at the top of the repository, with the other system tests, and are compiled into
//! the server crate's one integration-test binary (`crates/server/tests/all.rs`), so they can
//! start the real `workmate` binary and reuse its test harness. The sandbox's own limits (a fork
//! bomb, background processes, the network, the read-only system) are also tested where the
//! sandbox is built, in `crates/tools/tests/sandbox.rs`.

mod authority;
mod automations;
mod canary;
mod connect_links;
mod connections;
mod dingtalk_callbacks;
mod exec_http;
mod exec_slack;
mod exfiltration;
mod isolation_http;
mod linking;
mod mcp_host;
mod persona_git;
mod platform_callbacks;
mod separation;
mod ssrf;
mod surface_admin;
mod wakes;
