//! Automation runs in chat: a run's live and approval cards in its automation's thread while it
//! runs, and its result card when it ends, on whichever platform the automation posts to.
//!
//! Invariant: a target on a platform that is not configured shows nothing (the run still
//! happens, and its outcome is in the API and the inbox).

use tracing::warn;
use workmate_adapter::{CardId, ChatTarget};
use workmate_cards::{RunResult, run_card};
use workmate_engine::{ObserverFuture, RunObserver};
use workmate_store::{Automation, AutomationRun, RunStatus};
use workmate_tools::automations::{AutomationSettings, RunTarget};

use crate::Chat;

/// The chat thread a run target names.
pub(crate) fn chat_target(target: &RunTarget) -> ChatTarget {
    ChatTarget {
        chat_id: target.chat_id.clone(),
        thread_id: Some(target.thread_id.clone()).filter(|t| !t.is_empty()),
    }
}

fn target_of(automation: &Automation) -> Option<RunTarget> {
    AutomationSettings::from_json(&automation.settings).target
}

impl RunObserver for Chat {
    fn run_started<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a> {
        Box::pin(async move {
            let Some(target) = target_of(automation) else {
                return;
            };
            let Ok(slot) = self.slot(target.surface) else {
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
            let Some(target) = target_of(automation) else {
                return;
            };
            let Ok(slot) = self.slot(target.surface) else {
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
}
