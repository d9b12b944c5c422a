//! Self-wake tools: `sleep_until`, `wake_on`, `wake_on_event`.
//!
//! Invariants: a wake is stored only if it can fire — a timer not already in the past, a job that
//! exists in the tenant and is still running, an event key in the documented alphabet; and each
//! call stores exactly one wake for the calling session, so a repeated call sets a second wake.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use workmate_protocol::{RunId, SessionId, TenantId};

use crate::args::simple_tool;
use crate::automations::Schedule;
use crate::{RepoError, RepoFuture, Tool, ToolContext, ToolError, ToolMetadata, ToolResult};

/// What fires a wake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WakeTrigger {
    /// A time, in Unix milliseconds.
    Timer {
        /// When it fires.
        fire_at_ms: i64,
    },
    /// The end of an automation run (a job).
    Completion {
        /// The run's id.
        job_id: String,
    },
    /// A named event.
    Event {
        /// The event's key, checked by [`check_event_key`].
        key: String,
    },
}

/// A wake to store for a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewWake {
    /// The session it wakes.
    pub session_id: SessionId,
    /// What fires it.
    pub trigger: WakeTrigger,
    /// What the session is told when it fires.
    pub note: String,
}

/// Where an automation run (a job) stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobStatus {
    /// Still going.
    Running,
    /// Finished well.
    Ok,
    /// Failed.
    Error,
    /// Not run.
    Skipped,
}

/// What the self-wake tools need: the clock wakes fire by, the state of jobs, and a way to set a
/// wake.
pub trait WakeRepo: Send + Sync + fmt::Debug {
    /// Now, in Unix milliseconds, by the clock timers fire by.
    fn now_ms(&self) -> i64;

    /// The status of the automation run `job` of `tenant`, if there is one.
    fn job_status<'a>(
        &'a self,
        tenant: &'a TenantId,
        job: &'a RunId,
    ) -> RepoFuture<'a, Option<JobStatus>>;

    /// Stores `wake`; its id.
    fn set<'a>(&'a self, tenant: &'a TenantId, wake: &'a NewWake) -> RepoFuture<'a, String>;
}

/// How far in the past a timer may be and still be set (it then fires at once): enough for a
/// model that wrote "now" or a clock that drifts a little.
const PAST_TOLERANCE_MS: i64 = 60_000;
const MAX_NOTE_CHARS: usize = 4_000;
const MAX_EVENT_KEY_CHARS: usize = 200;

/// Arguments of `sleep_until`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SleepUntilArgs {
    /// When to wake: RFC 3339 ("2026-12-01T09:00:00+08:00") or an ISO time without offset, read
    /// as UTC ("2026-12-01T01:00").
    when: String,
    /// What to remember when woken: why you are waiting and what to do next.
    #[serde(default)]
    note: String,
}

/// Arguments of `wake_on`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WakeOnArgs {
    /// The id of an automation run, as returned by the run API.
    job_id: String,
    /// What to remember when woken: why you are waiting and what to do next.
    #[serde(default)]
    note: String,
}

/// Arguments of `wake_on_event`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WakeOnEventArgs {
    /// The event's key: 1–200 characters of letters, digits, `.`, `_`, `:` and `-`.
    event_key: String,
    /// What to remember when woken: why you are waiting and what to do next.
    #[serde(default)]
    note: String,
}

/// Wakes are cheap and need no approval, but setting one twice sets two.
fn wake_metadata() -> ToolMetadata {
    ToolMetadata {
        idempotent: false,
        ..ToolMetadata::read("wake")
    }
}

simple_tool!(
    /// `sleep_until(when, note="")`.
    SleepUntil,
    "sleep_until",
    SleepUntilArgs,
    "Wake this conversation at a time. After setting a wake, end your turn; you will be \
     re-invoked with a message (carrying your note) when it fires.",
    wake_metadata(),
    sleep_until
);

simple_tool!(
    /// `wake_on(job_id, note="")`.
    WakeOn,
    "wake_on",
    WakeOnArgs,
    "Wake this conversation when a job finishes. `job_id` is the id of an automation run, as \
     returned by the run API. After setting a wake, end your turn; you will be re-invoked with a \
     message (carrying your note) when it fires.",
    wake_metadata(),
    wake_on
);

simple_tool!(
    /// `wake_on_event(event_key, note="")`.
    WakeOnEvent,
    "wake_on_event",
    WakeOnEventArgs,
    "Wake this conversation when a named event fires (e.g. \"deploy:prod\"). After setting a \
     wake, end your turn; you will be re-invoked with a message (carrying your note) when it \
     fires.",
    wake_metadata(),
    wake_on_event
);

/// The three self-wake tools.
pub fn wake_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SleepUntil),
        Arc::new(WakeOn),
        Arc::new(WakeOnEvent),
    ]
}

async fn sleep_until(ctx: &ToolContext, args: SleepUntilArgs) -> ToolResult {
    check_note(&args.note)?;
    let when = args.when.trim();
    let fire_at_ms = instant_ms(when)?;
    let now = ctx.repos.wakes.now_ms();
    if fire_at_ms < now - PAST_TOLERANCE_MS {
        return Err(ToolError::new(format!(
            "{when:?} is in the past (it is now {}); give a future time",
            rfc3339(now)
        )));
    }
    let wake = NewWake {
        session_id: ctx.session_id.clone(),
        trigger: WakeTrigger::Timer { fire_at_ms },
        note: args.note,
    };
    let saved = save(ctx, &wake).await?;
    Ok(json!({"ok": true, "wake_id": saved, "fire_at": rfc3339(fire_at_ms)}))
}

async fn wake_on(ctx: &ToolContext, args: WakeOnArgs) -> ToolResult {
    check_note(&args.note)?;
    let job_id = args.job_id.trim();
    if job_id.is_empty() {
        return Err(ToolError::new("`job_id` must not be empty"));
    }
    let status = ctx
        .repos
        .wakes
        .job_status(&ctx.tenant_id, &RunId::from(job_id))
        .await
        .map_err(|e| store_error(&e))?
        .ok_or_else(|| {
            ToolError::new(format!(
                "no job {job_id:?} in this workspace; `job_id` is the id of an automation run, as returned by the run API"
            ))
        })?;
    if status != JobStatus::Running {
        // A completion wake on a finished run would never fire.
        return Err(ToolError::new(format!(
            "job {job_id:?} has already finished ({}); read its result instead of waiting",
            job_status(status)
        )));
    }
    let wake = NewWake {
        session_id: ctx.session_id.clone(),
        trigger: WakeTrigger::Completion {
            job_id: job_id.to_owned(),
        },
        note: args.note,
    };
    let saved = save(ctx, &wake).await?;
    Ok(json!({"ok": true, "wake_id": saved, "job_id": job_id}))
}

async fn wake_on_event(ctx: &ToolContext, args: WakeOnEventArgs) -> ToolResult {
    check_note(&args.note)?;
    let key = args.event_key.trim();
    check_event_key(key).map_err(|e| ToolError::new(e.to_string()))?;
    let wake = NewWake {
        session_id: ctx.session_id.clone(),
        trigger: WakeTrigger::Event {
            key: key.to_owned(),
        },
        note: args.note,
    };
    let saved = save(ctx, &wake).await?;
    Ok(json!({"ok": true, "wake_id": saved, "event_key": key}))
}

async fn save(ctx: &ToolContext, wake: &NewWake) -> Result<String, ToolError> {
    let saved = ctx
        .repos
        .wakes
        .set(&ctx.tenant_id, wake)
        .await
        .map_err(|e| store_error(&e))?;
    tracing::info!(
        tenant = %ctx.tenant_id,
        session = %ctx.session_id,
        wake = %saved,
        kind = wake.trigger.kind(),
        "Wake set."
    );
    Ok(saved)
}

/// `when` in Unix milliseconds; a time without offset is UTC. Parsing is the schedule's, so a
/// wake and a one-off automation read times the same way.
fn instant_ms(when: &str) -> Result<i64, ToolError> {
    let unreadable = || {
        ToolError::new(format!(
            "cannot read the time {when:?}: use RFC 3339 (\"2026-12-01T09:00:00+08:00\") or an ISO \
             time without offset, read as UTC (\"2026-12-01T01:00\")"
        ))
    };
    let once = Schedule::once(when, "UTC").map_err(|_| unreadable())?;
    once.next_after(0, 0, None).ok_or_else(unreadable)
}

fn rfc3339(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms).map_or_else(
        || ms.to_string(),
        |at| at.to_rfc3339_opts(SecondsFormat::Secs, true),
    )
}

/// An event key outside the alphabet wakes wait on; the message says what a key may hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid event key {key:?}: use 1–{MAX_EVENT_KEY_CHARS} characters of letters, digits, `.`, `_`, `:` and `-` (e.g. \"deploy:prod\")"
)]
pub struct InvalidEventKey {
    key: String,
}

/// Checks an event key: 1–200 characters of `[A-Za-z0-9._:-]`. The agent's `wake_on_event` and
/// whoever fires events (the HTTP API) check the same way, so a key one accepts the other does.
pub fn check_event_key(key: &str) -> Result<(), InvalidEventKey> {
    let valid_chars = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if key.is_empty() || key.chars().count() > MAX_EVENT_KEY_CHARS || !valid_chars {
        return Err(InvalidEventKey {
            key: key.to_owned(),
        });
    }
    Ok(())
}

fn check_note(note: &str) -> Result<(), ToolError> {
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(ToolError::new(format!(
            "the note is too long (at most {MAX_NOTE_CHARS} characters)"
        )));
    }
    Ok(())
}

fn job_status(status: JobStatus) -> &'static str {
    match status {
        JobStatus::Running => "running",
        JobStatus::Ok => "ok",
        JobStatus::Error => "error",
        JobStatus::Skipped => "skipped",
    }
}

impl WakeTrigger {
    /// The kind of wake, for logs: `timer`, `completion` or `event`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Timer { .. } => "timer",
            Self::Completion { .. } => "completion",
            Self::Event { .. } => "event",
        }
    }
}

fn store_error(error: &RepoError) -> ToolError {
    tracing::warn!(error = %error, "Wake store call failed.");
    ToolError::new("the wake store is unavailable; try again later")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc3339_or_naive_utc() {
        let naive = instant_ms("2026-12-01T01:00").unwrap();
        assert_eq!(instant_ms("2026-12-01T09:00:00+08:00").unwrap(), naive);
        assert_eq!(rfc3339(naive), "2026-12-01T01:00:00Z");
        let message = instant_ms("tomorrow").unwrap_err().message;
        assert!(message.contains("read as UTC"), "{message}");
    }

    #[test]
    fn event_keys_follow_the_alphabet() {
        for good in ["deploy:prod", "a", "build-1.done_ok", &"k".repeat(200)] {
            assert!(check_event_key(good).is_ok(), "{good}");
        }
        for bad in ["", "has space", "slash/y", "é", &"k".repeat(201)] {
            assert!(check_event_key(bad).is_err(), "{bad}");
        }
    }
}
