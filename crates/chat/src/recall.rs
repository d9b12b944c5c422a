//! A recalled or deleted message stops what it started.
//!
//! Handled as it arrives, before anything is acknowledged (a recall is its own durable act):
//! - a message still in the intake table (waiting, or taken by a worker that has not handed it
//!   to its conversation yet) is withdrawn: it never runs, and its thread is told;
//! - a message that reached its conversation and started the turn still running there stops
//!   that turn, as its author (in a shared conversation the person who asked may stop their own
//!   turn), and the thread is told;
//! - a message that only joined a running turn (steering), or whose turn already ended, changes
//!   nothing: what was done stays done.
//!
//! Invariants: a recall names a message by the platform's id of it ([`Inbound::message_ref`]),
//! looked up only within the recall's own tenant and platform; it never runs anything; a recall
//! delivered twice finds nothing left to do the second time.

use tracing::{debug, info, warn};
use workmate_adapter::{ChatTarget, Inbound, InboundKind, Taken};
use workmate_protocol::{Command, EventKind, SessionId, TenantId};

use crate::tenants::tenant_of;
use crate::{Chat, Result};

/// How far back a message still waiting in the intake table is looked for.
const WAITING_WINDOW_MS: i64 = 60 * 60 * 1000;
/// Waiting messages read at most.
const WAITING_READ: u32 = 500;
/// Recent events read to find the running turn's start.
const RECENT_EVENTS: u32 = 500;
/// How long a message's conversation is remembered for a recall.
pub(crate) const REMEMBERED_MS: i64 = 24 * 60 * 60 * 1000;

impl Chat {
    /// Handles a recall (see the module docs).
    pub(crate) async fn recall(&self, inbound: &Inbound, message_ref: &str) -> Result<Taken> {
        let tenant = tenant_of(inbound.surface, &inbound.tenant_key);
        let platform = inbound.surface.as_str();
        if let Some(waiting) = self.waiting_message(&tenant, platform, message_ref).await?
            && self
                .store()
                .intake()
                .withdraw(&waiting.key(), "recalled before it ran")
                .await?
        {
            info!(delivery = %waiting.delivery_id, "A recalled message was withdrawn before it ran.");
            if let Ok(original) = serde_json::from_value::<Inbound>(waiting.payload) {
                self.tell(
                    &original,
                    "↩️ A recalled message was dropped before it ran.",
                )
                .await;
            }
        }
        // A worker may have handed it on a moment before: then it stops what it started.
        let Some((session, arrived)) = self
            .store()
            .message_sessions()
            .session_of(&tenant, platform, message_ref)
            .await?
        else {
            debug!(
                message = message_ref,
                "A recalled message workmate did not act on."
            );
            return Ok(Taken::Stored);
        };
        self.stop_turn_started_by(&tenant, &session, arrived)
            .await?;
        Ok(Taken::Stored)
    }

    /// The message `message_ref` as it waits in the intake table, if no worker took it yet.
    async fn waiting_message(
        &self,
        tenant: &TenantId,
        platform: &str,
        message_ref: &str,
    ) -> Result<Option<workmate_store::Delivery>> {
        let since = self.store().clock_ms() - WAITING_WINDOW_MS;
        let waiting = self
            .store()
            .intake()
            .waiting_messages(tenant, platform, since, WAITING_READ)
            .await?;
        Ok(waiting
            .into_iter()
            .find(|d| d.payload.get("message_ref").and_then(|r| r.as_str()) == Some(message_ref)))
    }

    /// Stops the turn running in `session` if the message that went there at `arrived` (store
    /// clock, ms) started it.
    async fn stop_turn_started_by(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        arrived: i64,
    ) -> Result<()> {
        let Some(record) = self.store().sessions().get(tenant, session).await? else {
            return Ok(());
        };
        if !self.hub().is_running(tenant, session).await? {
            return Ok(());
        }
        let after = record.last_seq.saturating_sub(u64::from(RECENT_EVENTS));
        let events = self
            .store()
            .events()
            .list_after(tenant, session, after, RECENT_EVENTS)
            .await?;
        let started = events.iter().rev().find_map(|e| match &e.kind {
            EventKind::TurnStart { author, .. } => Some((e.at_ms, author.clone())),
            _ => None,
        });
        // The running turn is the message's when it started once the message arrived (the
        // newest turn start is the running turn's; an older message only steered it).
        let Some((started_at, Some(author))) = started else {
            return Ok(());
        };
        if started_at < arrived {
            return Ok(());
        }
        let command = Command::Interrupt {
            actor: author.clone(),
        };
        match self.hub().submit(tenant, session, command).await {
            Ok(_) => {
                info!(session = %session, "A recalled message's turn was stopped.");
                if let Some((_, target)) = self.cards_target(&record).await? {
                    self.notice_to(
                        &record,
                        &target,
                        "⏹️ Stopped: the message that started this was recalled.",
                    )
                    .await;
                }
            }
            Err(e) => warn!(error = %e, "A recalled message's turn could not be stopped."),
        }
        Ok(())
    }

    /// Tells the thread of `inbound` `text`; a failure is only logged.
    async fn tell(&self, inbound: &Inbound, text: &str) {
        let Ok(slot) = self.slot(inbound.surface) else {
            return;
        };
        let target = crate::notify::thread_of(inbound);
        let sent =
            workmate_adapter::with_retry(&slot.retry, || slot.platform.notice(&target, text)).await;
        if let Err(e) = sent {
            warn!(error = %e, "Cannot tell a thread its recalled message was dropped.");
        }
    }

    /// Posts `text` where `session`'s cards are; a failure is only logged.
    async fn notice_to(
        &self,
        session: &workmate_store::SessionRecord,
        target: &ChatTarget,
        text: &str,
    ) {
        let Ok(slot) = self.slot(session.key.surface) else {
            return;
        };
        let sent =
            workmate_adapter::with_retry(&slot.retry, || slot.platform.notice(target, text)).await;
        if let Err(e) = sent {
            warn!(error = %e, "Cannot tell a thread its recalled message's turn stopped.");
        }
    }
}

/// The message ref a delivery's recall names, when it is a recall.
pub(crate) fn recalled(inbound: &Inbound) -> Option<&str> {
    match &inbound.kind {
        InboundKind::Recall { message_ref } => Some(message_ref),
        _ => None,
    }
}
