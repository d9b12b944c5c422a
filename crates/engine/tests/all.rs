//! The turn engine's behaviour, driven through the session hub with the scripted provider.
#![allow(
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    clippy::needless_pass_by_value
)]

mod support;

mod approvals;
mod compaction;
mod gateway;
mod idle;
mod intake;
mod interrupts;
mod memory_switch;
mod permissions;
mod personas;
mod plans;
mod quorum;
mod recovery;
mod redteam;
mod resume;
mod scheduler;
mod session_commands;
mod tools;
mod turns;
mod wakes;
