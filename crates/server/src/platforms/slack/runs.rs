//! Automation runs in a Slack thread: the run's live and approval cards while it runs, and its
//! result card when it ends.

use tracing::warn;
use workmate_adapter::{CardId, ChatTarget};
use workmate_cards::{RunResult, run_card};
use workmate_protocol::{SessionId, TenantId};
use workmate_store::{AutomationRun, RunStatus};
use workmate_tools::automations::RunTarget;

use super::SlackSurface;

impl SlackSurface {
    /// Posts the run's cards (its turn, its approvals) into `target` from its first event.
    pub(crate) async fn show_run(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        target: &RunTarget,
    ) {
        if let Err(e) = self
            .pumps
            .ensure(tenant, session, chat_target(target))
            .await
        {
            warn!(error = %e, session = %session, "Cannot show an automation run in Slack.");
        }
    }

    /// Posts the result card of an ended run into `target`.
    pub(crate) fn post_run_result(
        &self,
        tenant: &TenantId,
        title: &str,
        run: &AutomationRun,
        target: &RunTarget,
    ) {
        let result = RunResult {
            title: title.to_owned(),
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
            tenant: tenant.clone(),
            session: run.session_id.clone(),
            card_key: format!("run:{}", run.id),
        };
        if let Err(e) = self
            .coalescer
            .submit(id, chat_target(target), run_card(&result))
        {
            warn!(error = %e, run = %run.id, "Cannot post an automation's result card.");
        }
    }
}

/// The Slack thread a run target names.
pub(super) fn chat_target(target: &RunTarget) -> ChatTarget {
    ChatTarget {
        chat_id: target.chat_id.clone(),
        thread_id: Some(target.thread_id.clone()).filter(|t| !t.is_empty()),
    }
}
