//! Self-wake tools: `sleep_until`, `wake_on`, `wake_on_event`.
//!
//! Invariants: a wake is stored only if it can fire — a timer not already in the past, a job that
//! exists in the tenant and is still running, an event key in the documented alphabet; and each
//! call stores exactly one wake for the calling session, so a repeated call sets a second wake.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use workmate_protocol::RunId;
use workmate_store::{NewWake, RunStatus, WakeKind};

use crate::args::simple_tool;
use crate::automations::Schedule;
use crate::{Tool, ToolContext, ToolError, ToolMetadata, ToolResult};

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
    let now = ctx.store.clock_ms();
    if fire_at_ms < now - PAST_TOLERANCE_MS {
        return Err(ToolError::new(format!(
            "{when:?} is in the past (it is now {}); give a future time",
            rfc3339(now)
        )));
    }
    let wake = NewWake {
        session_id: ctx.session_id.clone(),
        kind: WakeKind::Timer,
        fire_at_ms: Some(fire_at_ms),
        job_id: None,
        event_key: None,
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
    let run = ctx
        .store
        .automations()
        .run(&ctx.tenant_id, &RunId::from(job_id))
        .await
        .map_err(|e| store_error(&e))?
        .ok_or_else(|| {
            ToolError::new(format!(
                "no job {job_id:?} in this workspace; `job_id` is the id of an automation run, as returned by the run API"
            ))
        })?;
    if run.status != RunStatus::Running {
        // A completion wake on a finished run would never fire.
        return Err(ToolError::new(format!(
            "job {job_id:?} has already finished ({}); read its result instead of waiting",
            run_status(run.status)
        )));
    }
    let wake = NewWake {
        session_id: ctx.session_id.clone(),
        kind: WakeKind::Completion,
        fire_at_ms: None,
        job_id: Some(job_id.to_owned()),
        event_key: None,
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
        kind: WakeKind::Event,
        fire_at_ms: None,
        job_id: None,
        event_key: Some(key.to_owned()),
        note: args.note,
    };
    let saved = save(ctx, &wake).await?;
    Ok(json!({"ok": true, "wake_id": saved, "event_key": key}))
}

async fn save(ctx: &ToolContext, wake: &NewWake) -> Result<String, ToolError> {
    let saved = ctx
        .store
        .wakes()
        .create(&ctx.tenant_id, wake)
        .await
        .map_err(|e| store_error(&e))?;
    tracing::info!(
        tenant = %ctx.tenant_id,
        session = %ctx.session_id,
        wake = %saved.id,
        kind = ?saved.kind,
        "Wake set."
    );
    Ok(saved.id.into_string())
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

fn run_status(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Ok => "ok",
        RunStatus::Error => "error",
        RunStatus::Skipped => "skipped",
    }
}

fn store_error(error: &workmate_store::Error) -> ToolError {
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
