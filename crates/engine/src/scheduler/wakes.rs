//! Delivering self-wakes: a session that asked to be woken gets a message saying why, as a new
//! turn or, when it is busy, as steering for the turn in flight.
//!
//! Invariant: a wake is delivered at most once across processes: it is marked fired (one
//! conditional update) before it is delivered, so a crash in between loses that one wake rather
//! than sending it twice.

use std::sync::Arc;

use tracing::{info, warn};
use workmate_protocol::{Actor, Command};
use workmate_store::{Wake, WakeKind};

use super::Inner;
use crate::Result;

/// Delivers the wakes due at `now`; returns how many were delivered and the rows touched.
pub(super) async fn deliver_due(inner: &Arc<Inner>, now: i64) -> Result<(usize, usize)> {
    let store = inner.hub.store();
    let ready = store.wakes().ready(now, inner.config.batch).await?;
    let mut rows = ready.len();
    let mut delivered = 0;
    for wake in ready {
        rows += 1;
        if !store.wakes().mark_fired(&wake.tenant_id, &wake.id).await? {
            continue;
        }
        match deliver(inner, &wake).await {
            Ok(()) => {
                delivered += 1;
                info!(tenant = %wake.tenant_id, session = %wake.session_id, wake = %wake.id, "Session woken.");
            }
            Err(e) => {
                warn!(error = %e, tenant = %wake.tenant_id, session = %wake.session_id, wake = %wake.id, "Cannot deliver a wake; it is dropped.");
            }
        }
    }
    Ok((delivered, rows))
}

async fn deliver(inner: &Inner, wake: &Wake) -> Result<()> {
    let Some(session) = inner
        .hub
        .store()
        .sessions()
        .get(&wake.tenant_id, &wake.session_id)
        .await?
    else {
        return Err(crate::Error::SessionNotFound(wake.session_id.clone()));
    };
    let command = Command::UserMessage {
        author: Actor::new(session.owner),
        text: wake_message(wake),
        attachments: Vec::new(),
    };
    inner
        .hub
        .submit(&wake.tenant_id, &wake.session_id, command)
        .await?;
    Ok(())
}

/// What the woken session is told.
pub(crate) fn wake_message(wake: &Wake) -> String {
    let why = match wake.kind {
        WakeKind::Timer => "the timer you set has fired".to_owned(),
        WakeKind::Completion => format!(
            "the job `{}` you were waiting on has completed",
            wake.job_id.as_deref().unwrap_or_default()
        ),
        WakeKind::Event => format!(
            "the event `{}` you were waiting for has fired",
            wake.event_key.as_deref().unwrap_or_default()
        ),
    };
    let note = if wake.note.trim().is_empty() {
        String::new()
    } else {
        format!(" (note: {})", wake.note.trim())
    };
    format!("⏰ Wake — {why}{note}. Continue where you left off.")
}
