//! The engine: the session hub and the turn engine.
//!
//! Surfaces submit [`workmate_protocol::Command`]s to a [`SessionHub`] and consume
//! [`workmate_protocol::Event`]s; nothing else of the engine is visible to them. See `turn` for the
//! invariants of one turn, `hub` for those across sessions.

pub mod approval_timing;
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
pub mod permissions;
pub mod quorum;
mod runtime;
mod scheduler;
pub mod tenant_settings;
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
