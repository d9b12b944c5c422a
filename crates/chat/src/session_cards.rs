//! Where a session's cards are shown — its own thread, or the thread its automation posts to —
//! and bringing them back: making a session's card pump live, and redrawing after a restart.
//!
//! Invariants: a session outside any chat thread (HTTP, companion, system) has no cards here;
//! after a kill, only the sessions this replica still held are redrawn, and only the cards their
//! events changed in the last [`REDRAW_WINDOW`] before it stopped.

use tracing::warn;
use workmate_adapter::ChatTarget;
use workmate_protocol::{SessionId, Surface};
use workmate_store::SessionRecord;

use crate::error::Result;
use crate::handle::Chat;

/// How far back before a killed process stopped the cards it changed are redrawn.
const REDRAW_WINDOW: std::time::Duration = std::time::Duration::from_secs(600);
/// The most sessions redrawn after a restart.
const REDRAW_SESSIONS: u32 = 5_000;

impl Chat {
    /// Where a session's cards are shown: its own thread, or, for an automation run, the thread
    /// its automation posts to. `None` when neither is a chat thread.
    pub(crate) async fn cards_target(
        &self,
        session: &SessionRecord,
    ) -> Result<Option<(Surface, ChatTarget)>> {
        match session.key.surface {
            Surface::Scheduler => {
                let automation = workmate_protocol::AutomationId::from(session.key.chat_id.clone());
                let found = self
                    .store()
                    .automations()
                    .get(&session.tenant_id, &automation)
                    .await?;
                let target = found.and_then(|a| {
                    workmate_tools::automations::AutomationSettings::from_json(&a.settings).target
                });
                Ok(target.map(|t| (t.surface, crate::runs::chat_target(&t))))
            }
            Surface::Http | Surface::Companion | Surface::System => Ok(None),
            surface => Ok(Some((
                surface,
                crate::conversations::target_of(&session.key),
            ))),
        }
    }

    /// Makes sure a session's cards are live, on whichever platform shows them.
    pub async fn show_session(
        &self,
        tenant: &workmate_protocol::TenantId,
        session: &SessionId,
    ) -> Result<()> {
        self.show(tenant, session, None).await
    }

    /// Shows again, as they stand, the cards of the sessions this replica's previous life was
    /// driving when it stopped without releasing them (it was killed): the cards their events
    /// changed in the last `REDRAW_WINDOW` before it stopped, so a card whose last update died
    /// with it reaches its final state and a card it never posted is posted. A replica that
    /// stopped cleanly released every session, and redraws nothing. Call it at start-up, before
    /// cut turns are taken up. How many sessions were redrawn.
    pub async fn redraw_after_restart(&self) -> usize {
        let replica = &self.hub().config().replica;
        let held = match self
            .store()
            .leases()
            .held_by(replica, REDRAW_SESSIONS)
            .await
        {
            Ok(held) => held,
            Err(e) => {
                warn!(error = %e, "Cannot look for the sessions a restart left; their cards stay as they were.");
                return 0;
            }
        };
        let mut redrawn = 0;
        for (tenant, session) in held {
            match self.show(&tenant, &session, Some(REDRAW_WINDOW)).await {
                Ok(()) => redrawn += 1,
                Err(e) => warn!(session = %session, error = %e, "Cannot redraw a session's cards."),
            }
        }
        redrawn
    }

    /// Starts the session's card pump; with `redraw`, its recent cards are sent again.
    async fn show(
        &self,
        tenant: &workmate_protocol::TenantId,
        session: &SessionId,
        redraw: Option<std::time::Duration>,
    ) -> Result<()> {
        let Some(record) = self.store().sessions().get(tenant, session).await? else {
            return Ok(());
        };
        if let Some((surface, target)) = self.cards_target(&record).await?
            && let Ok(slot) = self.slot(surface)
        {
            match redraw {
                Some(window) => slot.pumps.redraw(tenant, session, target, window).await?,
                None => slot.pumps.ensure(tenant, session, target).await?,
            }
        }
        Ok(())
    }
}
