//! Logging setup for the binary.
//!
//! Invariant: logs go to stderr only (stdout carries command output), in the configured format,
//! filtered by the one resolved `[log] level` directive.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};
use crate::error::StartupError;

/// Installs the global subscriber. Call once, before anything logs.
pub fn init(log: &LogConfig) -> Result<(), StartupError> {
    let filter =
        EnvFilter::try_new(&log.level).map_err(|e| StartupError::Telemetry(e.to_string()))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let installed = match log.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    installed.map_err(|e| StartupError::Telemetry(e.to_string()))
}
