//! Automation runs in chat: a run's live and approval cards in its automation's thread while it
//! runs, and its result card when it ends, on whichever platform the automation posts to.
//!
//! Invariant: a target on a platform that is not configured shows nothing (the run still
//! happens, and its outcome is in the API and the inbox).

use std::sync::Arc;

use tracing::warn;
use workmate_adapter::{CardId, ChatTarget};
use workmate_cards::{RunResult, run_card};
use workmate_engine::{ObserverFuture, RunObserver};
use workmate_store::{Automation, AutomationRun, RunStatus};
use workmate_tools::automations::{AutomationSettings, RunTarget};

use crate::Chat;
use crate::handle::Slot;

/// The chat thread a run target names.
pub(crate) fn chat_target(target: &RunTarget) -> ChatTarget {
    ChatTarget {
        chat_id: target.chat_id.clone(),
        thread_id: Some(target.thread_id.clone()).filter(|t| !t.is_empty()),
        reply: None,
        person: None,
    }
}

impl Chat {
    /// The thread an automation posts to, and the platform that shows it, if configured.
    fn run_thread(&self, automation: &Automation) -> Option<(Arc<Slot>, RunTarget)> {
        let target = AutomationSettings::from_json(&automation.settings).target?;
        let slot = self.slot(target.surface).ok()?;
        Some((slot, target))
    }
}

impl RunObserver for Chat {
    fn run_started<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a> {
        Box::pin(async move {
            let Some((slot, target)) = self.run_thread(automation) else {
                return;
            };
            if let Err(e) = slot
                .pumps
                .ensure(&automation.tenant_id, &run.session_id, chat_target(&target))
                .await
            {
                warn!(error = %e, session = %run.session_id, "Cannot show an automation run in chat.");
            }
        })
    }

    fn run_finished<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a> {
        Box::pin(async move {
            let Some((slot, target)) = self.run_thread(automation) else {
                return;
            };
            let result = RunResult {
                title: automation.title.clone(),
                ok: run.status == RunStatus::Ok,
                trigger: serde_json::to_value(run.trigger)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                took_ms: run.finished_at_ms.map(|end| end - run.started_at_ms),
                summary: run.result_text.clone(),
                error: run.error.clone(),
                artifacts: run.artifacts.clone(),
            };
            let id = CardId {
                tenant: automation.tenant_id.clone(),
                session: run.session_id.clone(),
                card_key: format!("run:{}", run.id),
            };
            if let Err(e) = slot
                .coalescer
                .submit(id, chat_target(&target), run_card(&result))
            {
                warn!(error = %e, run = %run.id, "Cannot post an automation's result card.");
            }
        })
    }

    fn prompt_still_waits<'a>(&'a self, item: &'a workmate_store::InboxItem) -> ObserverFuture<'a> {
        Box::pin(async move {
            let tenant = &item.tenant_id;
            let session = match self.store().sessions().get(tenant, &item.session_id).await {
                Ok(Some(session)) => session,
                Ok(None) => return,
                Err(e) => {
                    warn!(error = %e, "Cannot read the session of a waiting prompt.");
                    return;
                }
            };
            let Ok(Some((surface, target))) = self.cards_target(&session).await else {
                return;
            };
            let Ok(slot) = self.slot(surface) else {
                return;
            };
            let minutes = (self.store().clock_ms() - item.created_at_ms) / 60_000;
            let text = format!(
                "⏰ Still waiting for an answer, asked {minutes} min ago: {}. Answer on its card, \
                 or with `/workmate inbox`.",
                item.title
            );
            let sent =
                workmate_adapter::with_retry(&slot.retry, || slot.platform.notice(&target, &text))
                    .await;
            if let Err(e) = sent {
                warn!(error = %e, "Cannot remind a thread of a waiting prompt.");
            }
            remind_approvers(&slot, item, minutes).await;
        })
    }
}

/// Tells each approver who was sent a copy of `item` (see [`crate::approver_copies`]) that it
/// still waits, in the same direct chat, just below their copy and its buttons.
async fn remind_approvers(slot: &Slot, item: &workmate_store::InboxItem, minutes: i64) {
    let chats = match slot.pumps.approver_copies().approver_chats(item).await {
        Ok(chats) => chats,
        Err(e) => {
            warn!(error = %e, "Cannot find the approvers of a waiting prompt.");
            return;
        }
    };
    let text = format!(
        "⏰ Still waiting for your approval, asked {minutes} min ago: {}. Answer on its card \
         above, or with `/workmate inbox`.",
        item.title
    );
    for (_, target) in chats {
        let sent =
            workmate_adapter::with_retry(&slot.retry, || slot.platform.notice(&target, &text))
                .await;
        if let Err(e) = sent {
            warn!(error = %e, "Cannot remind an approver of a waiting prompt.");
        }
    }
}
