//! Showing automation runs on the chat platform their automation posts to.

use std::sync::Arc;

use workmate_engine::{ObserverFuture, RunObserver};
use workmate_protocol::Surface;
use workmate_store::{Automation, AutomationRun};
use workmate_tools::automations::{AutomationSettings, RunTarget};

use super::slack::SlackSurface;

/// Sends each run's cards to its automation's target thread, on whichever configured platform
/// the target names. A target on a platform that is not configured shows nothing (the run
/// still happens, and its outcome is in the API and the inbox).
#[derive(Debug, Default)]
pub struct ChatRuns {
    slack: Option<Arc<SlackSurface>>,
}

impl ChatRuns {
    /// Runs shown on the given platforms.
    pub fn new(slack: Option<Arc<SlackSurface>>) -> Self {
        Self { slack }
    }

    fn slack_target(&self, automation: &Automation) -> Option<(&SlackSurface, RunTarget)> {
        let target = AutomationSettings::from_json(&automation.settings).target?;
        let slack = self.slack.as_deref()?;
        matches!(target.surface, Surface::Slack | Surface::Sandbox).then_some((slack, target))
    }
}

impl RunObserver for ChatRuns {
    fn run_started<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a> {
        Box::pin(async move {
            if let Some((slack, target)) = self.slack_target(automation) {
                slack
                    .show_run(&automation.tenant_id, &run.session_id, &target)
                    .await;
            }
        })
    }

    fn run_finished<'a>(
        &'a self,
        automation: &'a Automation,
        run: &'a AutomationRun,
    ) -> ObserverFuture<'a> {
        Box::pin(async move {
            if let Some((slack, target)) = self.slack_target(automation) {
                slack.post_run_result(&automation.tenant_id, &automation.title, run, &target);
            }
        })
    }
}
