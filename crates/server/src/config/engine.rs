//! Validating `[engine]`, `[scheduler]` and the admin token.
//!
//! Invariant: like every other key, these are checked once here and then only read.

use secrecy::SecretString;

use super::ConfigError;
use super::validate::{RawEngine, RawScheduler};

/// The model calls a turn may make by default.
pub(crate) const DEFAULT_MAX_ITERATIONS: i64 = 150;
/// How long after a crash a cut turn is still taken up again, by default.
pub(crate) const DEFAULT_RECOVER_WITHIN_SECONDS: i64 = 600;
/// How long an unused session keeps its live state, by default.
pub(crate) const DEFAULT_IDLE_SESSION_SECONDS: i64 = 120;
/// The model of sessions a surface creates, by default: the offline scripted provider.
pub(crate) const DEFAULT_MODEL: &str = "scripted:demo";

/// `[engine]`.
#[derive(Clone, Debug)]
pub struct EngineSettings {
    /// `max_iterations`: model calls per turn before `max_iterations_exceeded` (default 150).
    pub max_iterations: u32,
    /// `default_model`: the `provider:model` of new sessions (default `scripted:demo`).
    pub default_model: String,
    /// `recover_within_seconds`: a turn a crash cut short longer ago than this is ended with
    /// the restart notice instead of being taken up again (default 600).
    pub recover_within: std::time::Duration,
    /// `idle_session_seconds`: a session unused for this long drops its live state (default
    /// 120); the next use loads it again from the database.
    pub idle_session: std::time::Duration,
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_engine(
    raw: &RawEngine,
    invalid: Invalid<'_>,
) -> Result<EngineSettings, ConfigError> {
    let max = raw.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
    let max_iterations = u32::try_from(max)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| {
            invalid(
                "engine",
                "max_iterations",
                format!("{max} is not between 1 and 10000"),
            )
        })?;
    let default_model = raw
        .default_model
        .clone()
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    if default_model.trim().is_empty() {
        return Err(invalid(
            "engine",
            "default_model",
            "name a model such as scripted:demo".into(),
        ));
    }
    let within = raw
        .recover_within_seconds
        .unwrap_or(DEFAULT_RECOVER_WITHIN_SECONDS);
    let recover_within = u64::try_from(within)
        .ok()
        .filter(|s| (1..=7 * 86_400).contains(s))
        .map(std::time::Duration::from_secs)
        .ok_or_else(|| {
            invalid(
                "engine",
                "recover_within_seconds",
                format!("{within} is not between 1 and 604800 (a week)"),
            )
        })?;
    let idle = raw
        .idle_session_seconds
        .unwrap_or(DEFAULT_IDLE_SESSION_SECONDS);
    let idle_session = u64::try_from(idle)
        .ok()
        .filter(|s| (1..=86_400).contains(s))
        .map(std::time::Duration::from_secs)
        .ok_or_else(|| {
            invalid(
                "engine",
                "idle_session_seconds",
                format!("{idle} is not between 1 and 86400 (a day)"),
            )
        })?;
    Ok(EngineSettings {
        max_iterations,
        default_model,
        recover_within,
        idle_session,
    })
}

/// Seconds between scheduler ticks, by default.
pub(crate) const DEFAULT_TICK_SECONDS: i64 = 30;

/// `[scheduler]`.
#[derive(Clone, Debug)]
pub struct SchedulerSettings {
    /// `tick_seconds`: how often due automations and wakes are looked for (default 30).
    pub tick: std::time::Duration,
}

pub(crate) fn validate_scheduler(
    raw: &RawScheduler,
    invalid: Invalid<'_>,
) -> Result<SchedulerSettings, ConfigError> {
    let seconds = raw.tick_seconds.unwrap_or(DEFAULT_TICK_SECONDS);
    let tick = u64::try_from(seconds)
        .ok()
        .filter(|s| (1..=3600).contains(s))
        .ok_or_else(|| {
            invalid(
                "scheduler",
                "tick_seconds",
                format!("{seconds} is not between 1 and 3600"),
            )
        })?;
    Ok(SchedulerSettings {
        tick: std::time::Duration::from_secs(tick),
    })
}

pub(crate) fn validate_admin_token(
    raw: Option<String>,
    invalid: Invalid<'_>,
) -> Result<Option<SecretString>, ConfigError> {
    match raw {
        Some(token) if token.trim().chars().count() < 16 => Err(invalid(
            "server",
            "admin_token",
            "the admin token must be at least 16 characters; leave it unset to have one generated"
                .into(),
        )),
        // Trimmed like a presented token and the token file, so a stray newline from a secrets
        // mount cannot make every request fail.
        Some(token) => Ok(Some(SecretString::from(token.trim().to_owned()))),
        None => Ok(None),
    }
}
