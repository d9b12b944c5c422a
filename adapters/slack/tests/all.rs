//! The Slack adapter's integration tests, as one binary (CONVENTIONS.md: linking stays cheap):
//! the SDK-produced vectors, the protocol's edge cases, property tests, every card state as Block
//! Kit (snapshots) with Slack's limits, and the Web API client against a fake Slack.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cards;
mod commands;
mod events;
mod fixtures;
mod interaction;
mod limits;
mod props;
mod signature;
mod socket;
mod story;
mod web;
