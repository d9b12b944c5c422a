//! One run of an automation: an unattended session that gets the automation's instructions,
//! runs to its end (waiting in the inbox for any approval), and is written back as the run's
//! outcome.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tracing::{info, warn};
use workmate_protocol::{Actor, Command, Message, NoticeKind, PermissionMode, Surface};
use workmate_store::{Automation, AutomationRun, NewSession, RunEnd, RunStatus, SessionKey};
use workmate_tools::automations::{AutomationSettings, Schedule};

use super::Inner;
use crate::Result;

/// Most artifacts listed per run.
const MAX_ARTIFACTS: usize = 50;

/// What an adopted run whose turn was cut short by a restart is told.
const CONTINUE_AFTER_RESTART: &str = "⏰ The service restarted during this scheduled run. Continue the task from where you left off.";

/// The persona of runs whose automation names none.
const DEFAULT_PERSONA: &str = "cowork";

impl Inner {
    /// Spawns a run just claimed by a tick: opens its session, then drives it.
    pub(super) fn spawn_fresh(inner: &Arc<Self>, automation: Automation, run: AutomationRun) {
        let me = Arc::clone(inner);
        inner.tasks.spawn(async move {
            match Self::open(&me, &automation, run.clone()).await {
                Ok(run) => me.drive(automation, run, true).await,
                Err(e) => {
                    let why = format!("the run could not start: {e}");
                    me.finish(&automation, run, Some(why)).await;
                }
            }
        });
    }

    /// Spawns a run whose session is already open (a manual run).
    pub(super) fn spawn_opened(inner: &Arc<Self>, automation: Automation, run: AutomationRun) {
        let me = Arc::clone(inner);
        inner
            .tasks
            .spawn(async move { me.drive(automation, run, true).await });
    }

    /// Spawns the rest of a run another process started and left behind.
    pub(super) fn spawn_adopted(inner: &Arc<Self>, automation: Automation, run: AutomationRun) {
        let me = Arc::clone(inner);
        inner.tasks.spawn(async move {
            let store = me.hub.store();
            let tenant = &automation.tenant_id;
            let started = if run.session_id.as_str().is_empty() {
                None
            } else {
                let history = store.messages().list(tenant, &run.session_id).await;
                Some(history.map(|h| h.iter().any(|m| matches!(m, Message::User { .. }))))
            };
            match started {
                Some(Ok(true)) => me.drive(automation, run, false).await,
                Some(Ok(false)) => me.drive(automation, run, true).await,
                None => match Self::open(&me, &automation, run.clone()).await {
                    Ok(run) => me.drive(automation, run, true).await,
                    Err(e) => {
                        let why = format!("the run could not start: {e}");
                        me.finish(&automation, run, Some(why)).await;
                    }
                },
                Some(Err(e)) => warn!(error = %e, run = %run.id, "Cannot read an adopted run's session; leaving it for the next tick."),
            }
        });
    }

    /// Creates the run's session (unattended, owned by the automation's owner) and tells the
    /// observer, so the chat thread shows the run from its first event.
    pub(super) async fn open(
        inner: &Arc<Self>,
        automation: &Automation,
        mut run: AutomationRun,
    ) -> Result<AutomationRun> {
        let settings = AutomationSettings::from_json(&automation.settings);
        let new = NewSession {
            key: run_session_key(automation, &run),
            owner: automation.owner.clone(),
            title: Some(automation.title.clone()),
            persona: settings
                .persona
                .unwrap_or_else(|| DEFAULT_PERSONA.to_owned()),
            model: settings
                .model
                .unwrap_or_else(|| inner.hub.config().default_model.clone()),
            mode: PermissionMode::Interactive,
            unattended: true,
        };
        let tenant = &automation.tenant_id;
        let session = inner.hub.create_session(tenant, &new).await?;
        inner
            .hub
            .store()
            .automations()
            .set_run_session(tenant, &run.id, &session.id)
            .await?;
        run.session_id = session.id;
        inner.observer.run_started(automation, &run).await;
        Ok(run)
    }

    /// Sends the instructions (or resumes the session), waits for the run's session to go
    /// idle, and finishes the run. Returns early, leaving the run claimed, on shutdown.
    async fn drive(self: Arc<Self>, automation: Automation, run: AutomationRun, fresh: bool) {
        let tenant = &automation.tenant_id;
        let session = &run.session_id;
        if fresh {
            let command = Command::UserMessage {
                author: self.owner(&automation).await,
                text: opening_message(&automation),
                attachments: Vec::new(),
            };
            if let Err(e) = self.hub.submit(tenant, session, command).await {
                let why = format!("the run could not start: {e}");
                self.finish(&automation, run, Some(why)).await;
                return;
            }
        } else {
            self.continue_adopted(&automation, &run).await;
        }
        tokio::select! {
            () = self.stop.cancelled() => return,
            idle = self.hub.wait_idle(tenant, session) => {
                if let Err(e) = idle {
                    warn!(error = %e, run = %run.id, "Lost track of a run's session.");
                }
            }
        }
        if self.stop.is_cancelled() {
            return;
        }
        self.finish(&automation, run, None).await;
    }

    /// The automation's owner, named as the tenant knows them (cards show who a run acts for).
    async fn owner(&self, automation: &Automation) -> Actor {
        let mut owner = Actor::new(automation.owner.clone());
        let user = self
            .hub
            .store()
            .tenants()
            .get_user(&automation.tenant_id, &automation.owner)
            .await;
        owner.name = user.ok().flatten().map(|u| u.display_name);
        owner
    }

    /// Picks an adopted run up where its process left it: unanswered tool calls are resumed (a
    /// parked prompt waits again, without a second prompt); a turn the stop cut short gets a
    /// message to carry on; a run that had already answered is only finished.
    async fn continue_adopted(&self, automation: &Automation, run: &AutomationRun) {
        let (tenant, session) = (&automation.tenant_id, &run.session_id);
        match self.hub.resume_if_pending(tenant, session).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                warn!(error = %e, run = %run.id, "Cannot resume an adopted run; waiting for it anyway.");
                return;
            }
        }
        if self.hub.is_running(tenant, session).await.unwrap_or(true) {
            return;
        }
        let cut_short = match self.hub.store().messages().list(tenant, session).await {
            Ok(history) => matches!(
                history.last(),
                Some(
                    Message::User { .. }
                        | Message::Notice {
                            kind: NoticeKind::Interrupted,
                            ..
                        }
                )
            ),
            Err(_) => false,
        };
        if cut_short {
            let command = Command::UserMessage {
                author: self.owner(automation).await,
                text: CONTINUE_AFTER_RESTART.to_owned(),
                attachments: Vec::new(),
            };
            if let Err(e) = self.hub.submit(tenant, session, command).await {
                warn!(error = %e, run = %run.id, "Cannot continue an adopted run.");
            }
        }
    }

    /// Writes the run's outcome, releases the automation with its next due time, signals wakes
    /// waiting on the run, and tells the observer.
    pub(super) async fn finish(
        &self,
        automation: &Automation,
        mut run: AutomationRun,
        failure: Option<String>,
    ) {
        let store = self.hub.store();
        let tenant = &automation.tenant_id;
        let (status, result_text, error) = match failure {
            Some(why) => (RunStatus::Error, None, Some(why)),
            None => match store.messages().list(tenant, &run.session_id).await {
                Ok(history) => outcome(&history),
                Err(e) => (
                    RunStatus::Error,
                    None,
                    Some(format!("cannot read the run: {e}")),
                ),
            },
        };
        let workspace = workmate_tools::session_workspace(
            &self.hub.config().workspaces_dir,
            tenant,
            &run.session_id,
        );
        let since = run.started_at_ms;
        let artifacts = tokio::task::spawn_blocking(move || changed_files(&workspace, since))
            .await
            .unwrap_or_default();
        // Read again: the automation may have been paused or rescheduled during the run.
        let current = match store.automations().get(tenant, &automation.id).await {
            Ok(Some(current)) => current,
            Ok(None) => {
                info!(tenant = %tenant, automation = %automation.id, "Automation deleted during its run.");
                self.release(automation, &run.id);
                return;
            }
            Err(e) => {
                warn!(error = %e, run = %run.id, "Cannot finish a run now; its lease will lapse and it will be adopted.");
                self.release(automation, &run.id);
                return;
            }
        };
        let settings = AutomationSettings::from_json(&current.settings);
        let now = store.clock_ms();
        let next_run_ms = Schedule::from_json(&current.schedule)
            .ok()
            .filter(|_| current.enabled)
            .and_then(|s| s.next_after(now, current.run_count + 1, settings.max_runs));
        let end = RunEnd {
            status,
            result_text: result_text.clone(),
            error: error.clone(),
            artifacts: artifacts.clone(),
            next_run_ms,
        };
        match store
            .automations()
            .finish(tenant, &automation.id, &run, &end)
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                info!(run = %run.id, "Another process finished this run.");
                self.release(automation, &run.id);
                return;
            }
            Err(e) => {
                warn!(error = %e, run = %run.id, "Cannot record a run's end; its lease will lapse and it will be adopted.");
                self.release(automation, &run.id);
                return;
            }
        }
        info!(tenant = %tenant, automation = %automation.id, run = %run.id, status = ?status, "Automation run finished.");
        if let Err(e) = store.wakes().complete_job(tenant, run.id.as_str()).await {
            warn!(error = %e, run = %run.id, "Cannot signal wakes waiting on a run.");
        }
        run.status = status;
        run.result_text = result_text;
        run.error = error;
        run.artifacts = artifacts;
        run.finished_at_ms = Some(now);
        self.release(automation, &run.id);
        self.observer.run_finished(&current, &run).await;
    }
}

/// A run's session lives apart from every chat thread: keyed by automation and run.
fn run_session_key(automation: &Automation, run: &AutomationRun) -> SessionKey {
    SessionKey {
        surface: Surface::Scheduler,
        chat_id: automation.id.as_str().to_owned(),
        thread_id: run.id.as_str().to_owned(),
    }
}

/// Whether a session is an automation run, and of which automation.
pub(crate) fn run_automation(key: &SessionKey) -> Option<workmate_protocol::AutomationId> {
    (key.surface == Surface::Scheduler && !key.chat_id.is_empty())
        .then(|| workmate_protocol::AutomationId::from(key.chat_id.clone()))
}

fn opening_message(automation: &Automation) -> String {
    format!(
        "⏰ Scheduled run — {}\n\nCarry out the task below now, without asking whether to start. \
         The schedule already exists — do not create or change any scheduled tasks. End with a \
         short summary of what you did.\n\n{}",
        automation.title, automation.instructions
    )
}

/// The run's status, answer and error, read from its history.
fn outcome(history: &[Message]) -> (RunStatus, Option<String>, Option<String>) {
    let answer = history.iter().rev().find_map(|m| match m {
        Message::Assistant { content, .. } if !content.trim().is_empty() => Some(content.clone()),
        _ => None,
    });
    if crate::history::ends_in_error(history) {
        let text = history.iter().rev().find_map(|m| match m {
            Message::Notice {
                kind: NoticeKind::Error,
                text,
                ..
            } => Some(text.clone().unwrap_or_else(|| "the run failed".into())),
            _ => None,
        });
        return (RunStatus::Error, answer, text);
    }
    match history.last() {
        Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty() => {
            (RunStatus::Ok, answer, None)
        }
        _ => (
            RunStatus::Error,
            answer,
            Some("the run stopped before it finished".into()),
        ),
    }
}

/// Files under `root` changed at or after `since_ms`, relative to it, sorted, capped.
fn changed_files(root: &Path, since_ms: i64) -> Vec<String> {
    let since = UNIX_EPOCH + Duration::from_millis(u64::try_from(since_ms).unwrap_or_default());
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let path = entry.path();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.modified().unwrap_or(SystemTime::UNIX_EPOCH) >= since
                && let Ok(relative) = path.strip_prefix(root)
            {
                found.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found.truncate(MAX_ARTIFACTS);
    found
}
