//! The workmate service: configuration, the HTTP API and the commands of the `workmate` binary.
//!
//! This crate is the composition root: it resolves the configuration once, opens the store and
//! wires the HTTP surface. `src/main.rs` only parses the command line, calls [`run`] and prints.

pub mod audit;
mod backup;
pub mod bench;
pub mod cli;
mod commands;
pub mod config;
pub mod connectors;
mod coordinator_metrics;
pub mod data_dir;
pub mod database;
pub mod doctor;
pub mod engine;
pub mod engine_metrics;
pub mod error;
pub mod explain;
pub mod http;
pub mod memory_metrics;
pub mod metrics;
pub mod models;
pub mod platforms;
mod recovery;
mod roles;
mod sandbox;
mod secret_refs;
pub mod serve;
pub mod shutdown;
pub mod telemetry;
mod vault;

pub use commands::run;
pub use error::StartupError;
