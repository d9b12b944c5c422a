//! The tools' integration suite: every built-in driven through the `Tool` trait, as the engine
//! calls it, against a temporary folder root and a temporary SQLite store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod automations;
mod files;
mod memory;
mod patch;
mod repos;
mod roots;
mod sandbox;
mod shell;
mod skills;
mod web_fetch;
