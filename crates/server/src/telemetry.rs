//! Logging setup for the binary.
//!
//! Invariants: logs go to stderr only (stdout carries command output), in the configured format,
//! filtered by the one resolved `[log] level` directive; every line passes through the
//! process-wide DLP rules ([`workmate_dlp::global`]) before it is written, so a key or token that
//! reaches a log statement is written redacted.

use std::io::{IsTerminal, Write};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::config::{LogConfig, LogFormat};
use crate::error::StartupError;

/// Installs the global subscriber. Call once, before anything logs.
pub fn init(log: &LogConfig) -> Result<(), StartupError> {
    let filter =
        EnvFilter::try_new(&log.level).map_err(|e| StartupError::Telemetry(e.to_string()))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(RedactedStderr)
        .with_ansi(std::io::stderr().is_terminal());
    let installed = match log.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    installed.map_err(|e| StartupError::Telemetry(e.to_string()))
}

/// Stderr through the DLP rules: one event is collected, redacted, then written at once.
#[derive(Clone, Copy, Debug)]
pub struct RedactedStderr;

impl<'a> MakeWriter<'a> for RedactedStderr {
    type Writer = RedactedLine;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedLine(Vec::with_capacity(256))
    }
}

/// One log event on its way to stderr.
#[derive(Debug)]
pub struct RedactedLine(Vec<u8>);

impl Write for RedactedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.0);
        let redacted = workmate_dlp::global().text(&text);
        // Nowhere to report a failed write of a log line.
        let _ = std::io::stderr()
            .lock()
            .write_all(redacted.value.as_bytes());
    }
}
