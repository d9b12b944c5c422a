//! Automations (scheduled tasks) and their runs.
//!
//! Invariants: an automation is fired by whoever claims it, and a claim is one conditional update
//! `WHERE running_run_id IS NULL AND next_run_ms <= now`, so on any number of processes exactly
//! one fires each due slot; the claim and the run's row are written in one transaction. A claim
//! holds a lease the firing process renews; a lapsed lease (the process died) lets another
//! process adopt the run, never start a second one. Finishing a run writes its outcome, clears
//! the claim and sets the next due time in one transaction.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{AutomationId, RunId, SessionId, TenantId, UserId};

use crate::row::{col, enum_col, json_col, opt_enum_col, opt_json_col, to_json, to_word};
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
    /// Its tenant.
    pub tenant_id: TenantId,
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
    /// The run going now, if any.
    pub running_run_id: Option<RunId>,
    /// Until when the process driving that run holds it.
    pub lease_until_ms: Option<i64>,
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
    /// Files the run produced or changed.
    pub artifacts: Vec<String>,
}

/// How a run ended.
#[derive(Clone, Debug)]
pub struct RunEnd {
    /// `ok` or `error`.
    pub status: RunStatus,
    /// Its final answer.
    pub result_text: Option<String>,
    /// Its error.
    pub error: Option<String>,
    /// Files it produced or changed.
    pub artifacts: Vec<String>,
    /// When the automation is next due (`None`: never again).
    pub next_run_ms: Option<i64>,
}

/// A claim on an automation: the run it starts and how long the claim holds.
#[derive(Clone, Copy, Debug)]
pub struct Claim<'a> {
    /// The run to start.
    pub run: &'a RunId,
    /// Why.
    pub trigger: RunTrigger,
    /// Now, as the claimer sees it.
    pub now_ms: i64,
    /// When the claim lapses unless renewed.
    pub lease_until_ms: i64,
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
            .query("SELECT tenant_id, automation_id, title, instructions, schedule_json, owner_user_id, origin_session_id, enabled, next_run_ms, last_run_ms, last_status, run_count, settings_json, created_at_ms, running_run_id, lease_until_ms FROM automations WHERE tenant_id = ? AND automation_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(id.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| automation_from_row(&r)).transpose()
    }

    /// Claims the automation for a new run and records the run, in one transaction. A scheduled
    /// or catch-up claim needs the automation enabled and due; a manual one only that no run is
    /// going. Returns the run, or `None` when someone else holds the automation (or it is not due).
    pub async fn claim(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        claim: &Claim<'_>,
    ) -> Result<Option<AutomationRun>> {
        let mut tx = self.store.begin_write().await?;
        let run = self.claim_in(&mut tx, tenant, automation, claim).await?;
        tx.commit().await?;
        Ok(run)
    }

    /// Claims several automations in one transaction (a tick's due batch): one commit instead
    /// of one per automation. Returns, in the order given, the run started for each automation,
    /// or `None` where someone else holds it.
    pub async fn claim_batch(
        &self,
        batch: &[(&Automation, Claim<'_>)],
    ) -> Result<Vec<Option<AutomationRun>>> {
        let mut tx = self.store.begin_write().await?;
        let mut runs = Vec::with_capacity(batch.len());
        for (automation, claim) in batch {
            let run = self
                .claim_in(&mut tx, &automation.tenant_id, &automation.id, claim)
                .await?;
            runs.push(run);
        }
        tx.commit().await?;
        Ok(runs)
    }

    async fn claim_in(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        tenant: &TenantId,
        automation: &AutomationId,
        claim: &Claim<'_>,
    ) -> Result<Option<AutomationRun>> {
        let scheduled = i64::from(claim.trigger != RunTrigger::Manual);
        let claimed = self
            .store
            .dialect
            .query("UPDATE automations SET running_run_id = ?, lease_until_ms = ? WHERE tenant_id = ? AND automation_id = ? AND running_run_id IS NULL AND (? = 0 OR (enabled = 1 AND next_run_ms <= ?))")
            .bind(claim.run.as_str().to_owned())
            .bind(claim.lease_until_ms)
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(scheduled)
            .bind(claim.now_ms)
            .execute(&mut **tx)
            .await?;
        if claimed.rows_affected() != 1 {
            return Ok(None);
        }
        let run = AutomationRun {
            id: claim.run.clone(),
            automation_id: automation.clone(),
            session_id: SessionId::from(String::new()),
            trigger: claim.trigger,
            status: RunStatus::Running,
            started_at_ms: claim.now_ms,
            finished_at_ms: None,
            result_text: None,
            error: None,
            artifacts: Vec::new(),
        };
        self.store
            .dialect
            .query("INSERT INTO automation_runs (tenant_id, run_id, automation_id, session_id, run_trigger, status, started_at_ms) VALUES (?, ?, ?, '', ?, 'running', ?)")
            .bind(tenant.as_str().to_owned())
            .bind(run.id.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(to_word(&run.trigger)?)
            .bind(run.started_at_ms)
            .execute(&mut **tx)
            .await?;
        Ok(Some(run))
    }

    /// Records the session a claimed run talks in.
    pub async fn set_run_session(
        &self,
        tenant: &TenantId,
        run: &RunId,
        session: &SessionId,
    ) -> Result<()> {
        self.store
            .dialect
            .query("UPDATE automation_runs SET session_id = ? WHERE tenant_id = ? AND run_id = ?")
            .bind(session.as_str().to_owned())
            .bind(tenant.as_str().to_owned())
            .bind(run.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Extends the lease on a run this process drives; `false` if the run no longer holds the
    /// automation (it finished, or another process adopted it after the lease lapsed).
    pub async fn renew(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        run: &RunId,
        lease_until_ms: i64,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE automations SET lease_until_ms = ? WHERE tenant_id = ? AND automation_id = ? AND running_run_id = ?")
            .bind(lease_until_ms)
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(run.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Takes over a run whose lease lapsed (its process died); `false` if another process was
    /// first or the lease was renewed meanwhile.
    pub async fn adopt(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        run: &RunId,
        now_ms: i64,
        lease_until_ms: i64,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE automations SET lease_until_ms = ? WHERE tenant_id = ? AND automation_id = ? AND running_run_id = ? AND lease_until_ms < ?")
            .bind(lease_until_ms)
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(run.as_str().to_owned())
            .bind(now_ms)
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records how a run ended, releases the automation and sets when it is next due, in one
    /// transaction. `false` (and nothing written) if the run no longer holds the automation.
    pub async fn finish(
        &self,
        tenant: &TenantId,
        automation: &AutomationId,
        run: &AutomationRun,
        end: &RunEnd,
    ) -> Result<bool> {
        let now = self.store.clock_ms();
        let mut tx = self.store.begin_write().await?;
        let released = self
            .store
            .dialect
            .query("UPDATE automations SET running_run_id = NULL, lease_until_ms = NULL, next_run_ms = ?, run_count = run_count + 1, last_run_ms = ?, last_status = ?, updated_at_ms = ? WHERE tenant_id = ? AND automation_id = ? AND running_run_id = ?")
            .bind(end.next_run_ms)
            .bind(run.started_at_ms)
            .bind(to_word(&end.status)?)
            .bind(now)
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .bind(run.id.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        if released.rows_affected() != 1 {
            return Ok(false);
        }
        self.store
            .dialect
            .query("UPDATE automation_runs SET status = ?, finished_at_ms = ?, result_text = ?, error_text = ?, artifacts_json = ? WHERE tenant_id = ? AND run_id = ? AND status = 'running'")
            .bind(to_word(&end.status)?)
            .bind(now)
            .bind(end.result_text.clone())
            .bind(end.error.clone())
            .bind(to_json(&end.artifacts)?)
            .bind(tenant.as_str().to_owned())
            .bind(run.id.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Automations due at `now` that no run holds, across tenants, soonest first.
    pub async fn due(&self, now_ms: i64, limit: u32) -> Result<Vec<Automation>> {
        let rows = self
            .store
            .dialect
            .query(concat!(
                "SELECT tenant_id, automation_id, title, instructions, schedule_json, owner_user_id, origin_session_id, enabled, next_run_ms, last_run_ms, last_status, run_count, settings_json, created_at_ms, running_run_id, lease_until_ms ",
                "FROM automations WHERE enabled = 1 AND next_run_ms <= ? AND running_run_id IS NULL ORDER BY next_run_ms LIMIT ?"
            ))
            .bind(now_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(automation_from_row).collect()
    }

    /// Automations held by a run whose lease lapsed before `now`, across tenants.
    pub async fn orphaned(&self, now_ms: i64, limit: u32) -> Result<Vec<Automation>> {
        let rows = self
            .store
            .dialect
            .query(concat!(
                "SELECT tenant_id, automation_id, title, instructions, schedule_json, owner_user_id, origin_session_id, enabled, next_run_ms, last_run_ms, last_status, run_count, settings_json, created_at_ms, running_run_id, lease_until_ms ",
                "FROM automations WHERE lease_until_ms < ? AND running_run_id IS NOT NULL ORDER BY lease_until_ms LIMIT ?"
            ))
            .bind(now_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(automation_from_row).collect()
    }

    /// A tenant's automations, soonest due first (those never due again last).
    pub async fn list(&self, tenant: &TenantId, limit: u32) -> Result<Vec<Automation>> {
        let rows = self
            .store
            .dialect
            .query(concat!(
                "SELECT tenant_id, automation_id, title, instructions, schedule_json, owner_user_id, origin_session_id, enabled, next_run_ms, last_run_ms, last_status, run_count, settings_json, created_at_ms, running_run_id, lease_until_ms ",
                "FROM automations WHERE tenant_id = ? ORDER BY CASE WHEN next_run_ms IS NULL THEN 1 ELSE 0 END, next_run_ms, created_at_ms LIMIT ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(automation_from_row).collect()
    }

    /// Saves what a person may change: title, instructions, schedule, enabled, next due time and
    /// settings. Returns the stored automation, or `None` if the tenant has no such automation.
    pub async fn update(&self, automation: &Automation) -> Result<Option<Automation>> {
        let done = self
            .store
            .dialect
            .query("UPDATE automations SET title = ?, instructions = ?, schedule_json = ?, enabled = ?, next_run_ms = ?, settings_json = ?, updated_at_ms = ? WHERE tenant_id = ? AND automation_id = ?")
            .bind(automation.title.clone())
            .bind(automation.instructions.clone())
            .bind(to_json(&automation.schedule)?)
            .bind(i64::from(automation.enabled))
            .bind(automation.next_run_ms)
            .bind(to_json(&automation.settings)?)
            .bind(self.store.clock_ms())
            .bind(automation.tenant_id.as_str().to_owned())
            .bind(automation.id.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        if done.rows_affected() != 1 {
            return Ok(None);
        }
        self.get(&automation.tenant_id, &automation.id).await
    }

    /// Deletes an automation and its runs; `false` if there was none.
    pub async fn delete(&self, tenant: &TenantId, automation: &AutomationId) -> Result<bool> {
        let mut tx = self.store.begin_write().await?;
        let done = self
            .store
            .dialect
            .query("DELETE FROM automations WHERE tenant_id = ? AND automation_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        self.store
            .dialect
            .query("DELETE FROM automation_runs WHERE tenant_id = ? AND automation_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(automation.as_str().to_owned())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// One run, if the tenant has it.
    pub async fn run(&self, tenant: &TenantId, run: &RunId) -> Result<Option<AutomationRun>> {
        let row = self
            .store
            .dialect
            .query("SELECT run_id, automation_id, session_id, run_trigger, status, started_at_ms, finished_at_ms, result_text, error_text, artifacts_json FROM automation_runs WHERE tenant_id = ? AND run_id = ?")
            .bind(tenant.as_str().to_owned())
            .bind(run.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| run_from_row(&r)).transpose()
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
            .query("SELECT run_id, automation_id, session_id, run_trigger, status, started_at_ms, finished_at_ms, result_text, error_text, artifacts_json FROM automation_runs WHERE tenant_id = ? AND automation_id = ? ORDER BY started_at_ms DESC, run_id DESC LIMIT ?")
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
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
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
        running_run_id: col::<Option<String>>(row, T, "running_run_id")?.map(RunId::from),
        lease_until_ms: col(row, T, "lease_until_ms")?,
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
        artifacts: opt_json_col(row, T, "artifacts_json")?.unwrap_or_default(),
    })
}
