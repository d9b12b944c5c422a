//! Automations (scheduled tasks) and their runs.
//!
//! The scheduler's claim-and-fire logic arrives with the automations work; this repository
//! stores what it needs: the task, its next due time, and one row per run.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{AutomationId, RunId, SessionId, TenantId, UserId};

use crate::row::{col, enum_col, json_col, opt_enum_col, to_json, to_word};
use crate::{Error, Result, Store};

/// An automation to create.
#[derive(Clone, Debug)]
pub struct NewAutomation {
    /// Short title.
    pub title: String,
    /// What to do on each run.
    pub instructions: String,
    /// When to run (`{"kind":"cron","cron":"0 9 * * 1-5","timezone":"Asia/Shanghai"}`, …).
    pub schedule: serde_json::Value,
    /// Who owns it.
    pub owner: UserId,
    /// The session it was created from, if any.
    pub origin_session_id: Option<SessionId>,
    /// Whether it fires.
    pub enabled: bool,
    /// When it is next due.
    pub next_run_ms: Option<i64>,
    /// Everything else (notify target, model, allowed tools, …).
    pub settings: serde_json::Value,
}

/// A stored automation.
#[derive(Clone, Debug, PartialEq)]
pub struct Automation {
    /// Its id.
    pub id: AutomationId,
    /// Short title.
    pub title: String,
    /// What to do on each run.
    pub instructions: String,
    /// When to run.
    pub schedule: serde_json::Value,
    /// Who owns it.
    pub owner: UserId,
    /// The session it was created from.
    pub origin_session_id: Option<SessionId>,
    /// Whether it fires.
    pub enabled: bool,
    /// When it is next due.
    pub next_run_ms: Option<i64>,
    /// When it last ran.
    pub last_run_ms: Option<i64>,
    /// How its last run ended.
    pub last_status: Option<RunStatus>,
    /// How many runs it has had.
    pub run_count: i64,
    /// Everything else.
    pub settings: serde_json::Value,
    /// When it was created.
    pub created_at_ms: i64,
}

/// Why a run started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunTrigger {
    /// Its schedule came due.
    Schedule,
    /// Someone started it by hand.
    Manual,
    /// It was missed while the service was down.
    Catchup,
}

/// How a run is going or went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still going.
    Running,
    /// Finished well.
    Ok,
    /// Failed.
    Error,
    /// Not run (the previous run was still going).
    Skipped,
}

/// One run of an automation.
#[derive(Clone, Debug, PartialEq)]
pub struct AutomationRun {
    /// Its id.
    pub id: RunId,
    /// The automation.
    pub automation_id: AutomationId,
    /// The session the run talks in.
    pub session_id: SessionId,
    /// Why it started.
    pub trigger: RunTrigger,
    /// How it is going.
    pub status: RunStatus,
    /// When it started.
    pub started_at_ms: i64,
    /// When it ended.
    pub finished_at_ms: Option<i64>,
    /// Its final answer.
    pub result_text: Option<String>,
    /// Its error.
    pub error: Option<String>,
}

/// Automations and runs.
#[derive(Debug)]
pub struct AutomationRepo<'s> {
    store: &'s Store,
}

impl<'s> AutomationRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Creates an automation.
    pub async fn create(&self, tenant: &TenantId, new: &NewAutomation) -> Result<Automation> {
        let id = AutomationId::new();
        let now = self.store.clock_ms();
        self.store
            .dialect
            .query("INSERT INTO automations (tenant_id, automation_id, title, instructions, schedule_json, owner_user_id, origin_session_id, enabled, next_run_ms, last_run_ms, last_status, run_count, settings_json, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 0, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(id.as_str().to_owned())
            .bind(new.title.clone())
            .bind(new.instructions.clone())
            .bind(to_json(&new.schedule)?)
            .bind(new.owner.as_str().to_owned())
            .bind(new.origin_session_id.as_ref().map(|s| s.as_str().to_owned()))
            .bind(i64::from(new.enabled))
            .bind(new.next_run_ms)
            .bind(to_json(&new.settings)?)
            .bind(now)
            .bind(now)
            .execute(&self.store.pool)
            .await?;
        self.get(tenant, &id).await?.ok_or_else(|| Error::NotFound {
            what: format!("automation {id} right after creating it"),
        })
    }

    /// One automation, if the tenant has it.
    pub async fn get(&self, tenant: &TenantId, id: &AutomationId) -> Result<Option<Automation>> {
        let row = self
            .store
            .dialect
            .query("SELECT automation_id, title, instructions, schedule_json, owner_user_id, origin_session_id, enabled, next_run_ms, last_run_ms, last_status, run_count, settings_json, created_at_ms FROM automations WHERE tenant_id = ? AND automation_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(id.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| automation_from_row(&r)).transpose()
    }

    /// Records the start of a run.
    pub async fn start_run(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        session: &SessionId,
        trigger: RunTrigger,
    ) -> Result<AutomationRun> {
        let run = AutomationRun {
            id: RunId::new(),
            automation_id: automation.clone(),
            session_id: session.clone(),
            trigger,
            status: RunStatus::Running,
            started_at_ms: self.store.clock_ms(),
            finished_at_ms: None,
            result_text: None,
            error: None,
        };
        self.store
            .dialect
            .query("INSERT INTO automation_runs (tenant_id, run_id, automation_id, session_id, run_trigger, status, started_at_ms) VALUES (?, ?, ?, ?, ?, 'running', ?)")
            .bind(tenant.as_str().to_owned())
            .bind(run.id.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(to_word(&trigger)?)
            .bind(run.started_at_ms)
            .execute(&self.store.pool)
            .await?;
        Ok(run)
    }

    /// Records how a running run ended; `false` if it was not running.
    pub async fn finish_run(
        &self,
        tenant: &TenantId,
        run: &RunId,
        status: RunStatus,
        result_text: Option<&str>,
        error: Option<&str>,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE automation_runs SET status = ?, finished_at_ms = ?, result_text = ?, error_text = ? WHERE tenant_id = ? AND run_id = ? AND status = 'running'")
            .bind(to_word(&status)?)
            .bind(self.store.clock_ms())
            .bind(result_text.map(str::to_owned))
            .bind(error.map(str::to_owned))
            .bind(tenant.as_str().to_owned())
            .bind(run.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// An automation's runs, newest first.
    pub async fn runs(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        limit: u32,
    ) -> Result<Vec<AutomationRun>> {
        let rows = self
            .store
            .dialect
            .query("SELECT run_id, automation_id, session_id, run_trigger, status, started_at_ms, finished_at_ms, result_text, error_text FROM automation_runs WHERE tenant_id = ? AND automation_id = ? ORDER BY started_at_ms DESC, run_id DESC LIMIT ?")
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(run_from_row).collect()
    }
}

fn automation_from_row(row: &AnyRow) -> Result<Automation> {
    const T: &str = "automations";
    Ok(Automation {
        id: AutomationId::from(col::<String>(row, T, "automation_id")?),
        title: col(row, T, "title")?,
        instructions: col(row, T, "instructions")?,
        schedule: json_col(row, T, "schedule_json")?,
        owner: UserId::from(col::<String>(row, T, "owner_user_id")?),
        origin_session_id: col::<Option<String>>(row, T, "origin_session_id")?.map(SessionId::from),
        enabled: col::<i64>(row, T, "enabled")? != 0,
        next_run_ms: col(row, T, "next_run_ms")?,
        last_run_ms: col(row, T, "last_run_ms")?,
        last_status: opt_enum_col(row, T, "last_status")?,
        run_count: col(row, T, "run_count")?,
        settings: json_col(row, T, "settings_json")?,
        created_at_ms: col(row, T, "created_at_ms")?,
    })
}

fn run_from_row(row: &AnyRow) -> Result<AutomationRun> {
    const T: &str = "automation_runs";
    Ok(AutomationRun {
        id: RunId::from(col::<String>(row, T, "run_id")?),
        automation_id: AutomationId::from(col::<String>(row, T, "automation_id")?),
        session_id: SessionId::from(col::<String>(row, T, "session_id")?),
        trigger: enum_col(row, T, "run_trigger")?,
        status: enum_col(row, T, "status")?,
        started_at_ms: col(row, T, "started_at_ms")?,
        finished_at_ms: col(row, T, "finished_at_ms")?,
        result_text: col(row, T, "result_text")?,
        error: col(row, T, "error_text")?,
    })
}
