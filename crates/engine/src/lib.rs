//! The engine: the session hub and the turn engine.
//!
//! Surfaces submit [`workmate_protocol::Command`]s to a [`SessionHub`] and consume
//! [`workmate_protocol::Event`]s; nothing else of the engine is visible to them. See `turn` for the
//! invariants of one turn, `hub` for those across sessions.

pub mod approval_timing;
pub mod automations;
pub mod binding;
mod compaction;
mod config;
mod deps;
pub mod dlp;
mod documents;
mod emitter;
mod error;
mod history;
mod hub;
mod inbox_wait;
pub mod observe;
pub mod quorum;
mod runtime;
mod scheduler;
pub mod tenant_settings;
pub mod tool_repos;
mod tool_sources;
mod turn;

pub use config::EngineConfig;
pub use error::{Error, Result};
pub use hub::{
    Accepted, Drained, EngineParts, KEY_WINDOW, Reply, SessionHub, Submitted, Verdict, check_mode,
    parse_reply, reply_token,
};
pub use scheduler::{
    NoObserver, ObserverFuture, RunObserver, Scheduler, SchedulerConfig, TickObserver, TickReport,
};
pub use turn::{RESTARTED_NOTICE, check_gateway_policy};
pub use workmate_coordinator::{Coordinator, InProcess, Signal};
/// The permission policy (crate `workmate-policy`) under its old name: the engine's public types
/// (`EngineParts`) hold its `PermissionConfig`, so the engine's users name its types through the
/// engine and always get the version the engine was built with.
pub use workmate_policy as permissions;
