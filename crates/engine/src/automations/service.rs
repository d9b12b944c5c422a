//! Creating, changing and showing automations: the one place the HTTP API, the chat commands and
//! the agent's tools (through the engine's `AutomationRepo`) go through, so all three validate
//! the same way and show the same shape.
//!
//! Invariants: nothing is stored unless the whole request is valid; the next run is computed
//! from the schedule whenever the schedule, the enabled flag or the run cap changes; who may
//! create automations is the tenant's `automation_creators` setting (`member`, the default,
//! `approver` or `admin`); who may manage one is its owner or a tenant admin; standing rules an
//! owner asked for but may not grant wait in `requested_rules` until an approver or an admin
//! settles them, and only then become rules; every creation, change and deletion leaves an
//! audit record (`automation_created`, `automation_changed`, `automation_deleted`) naming who
//! made it and through which surface.

use serde_json::{Value, json};
use workmate_protocol::{AutomationId, SessionId, TenantId, UserId};
use workmate_store::{Automation, NewAuditRecord, NewAutomation, Role, Store};
use workmate_tools::automations::{
    AutomationChange, AutomationDraft, AutomationSettings, ChangedBy, Schedule, ScheduleError,
    StandingRule, format_in, zone,
};

/// Why an automation request failed.
#[derive(Debug, thiserror::Error)]
pub enum AutomationError {
    /// The request is wrong; the text says how to fix it.
    #[error("{0}")]
    Invalid(String),
    /// The caller may not do this; the text says who may.
    #[error("{0}")]
    Forbidden(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
}

pub(super) type Result<T> = std::result::Result<T, AutomationError>;

/// Audits `stage` of `automation` by `by`, with `changed` naming what changed.
async fn audit(
    store: &Store,
    tenant: &TenantId,
    automation: &Automation,
    stage: &str,
    by: ChangedBy<'_>,
    changed: Vec<&str>,
) -> Result<()> {
    let record = NewAuditRecord {
        actor: Some(by.user.as_str().to_owned()),
        stage: stage.into(),
        status: Some("ok".into()),
        detail: json!({
            "automation_id": automation.id,
            "title": automation.title,
            "owner": automation.owner,
            "enabled": automation.enabled,
            "via": by.via,
            "changed": changed,
        }),
        ..NewAuditRecord::default()
    };
    store.audit().append(tenant, &record).await?;
    Ok(())
}

/// The tenant's zone for new automations: its `timezone` setting, else UTC.
pub async fn tenant_timezone(store: &Store, tenant: &TenantId) -> Result<String> {
    let settings = store.tenants().get(tenant).await?.map(|t| t.settings);
    Ok(settings
        .as_ref()
        .and_then(|s| s.get("timezone"))
        .and_then(Value::as_str)
        .filter(|tz| zone(tz).is_ok())
        .unwrap_or("UTC")
        .to_owned())
}

/// Refuses unless `user` has the role the tenant requires to create automations.
pub async fn check_creator(store: &Store, tenant: &TenantId, user: &UserId) -> Result<()> {
    let settings = store.tenants().get(tenant).await?.map(|t| t.settings);
    let required = match settings
        .as_ref()
        .and_then(|s| s.get("automation_creators"))
        .and_then(Value::as_str)
    {
        Some("admin") => Role::Admin,
        Some("approver") => Role::Approver,
        _ => Role::Member,
    };
    let role = store
        .tenants()
        .get_user(tenant, user)
        .await?
        .map_or(Role::Member, |u| u.role);
    let rank = |role: Role| match role {
        Role::Member => 0,
        Role::Approver => 1,
        Role::Admin => 2,
    };
    if rank(role) >= rank(required) {
        return Ok(());
    }
    let who = match required {
        Role::Admin => "admins",
        Role::Approver => "approvers and admins",
        Role::Member => "members",
    };
    Err(AutomationError::Forbidden(format!(
        "only {who} may create automations in this workspace; ask an admin"
    )))
}

/// Refuses unless `user` may manage `automation`: its owner or a tenant admin may change, pause,
/// resume, run or delete it; anyone else is told who may.
pub async fn check_manager(
    store: &Store,
    tenant: &TenantId,
    automation: &Automation,
    user: &UserId,
) -> Result<()> {
    if automation.owner == *user {
        return Ok(());
    }
    let admin = store
        .tenants()
        .get_user(tenant, user)
        .await?
        .is_some_and(|u| u.role == Role::Admin);
    if admin {
        return Ok(());
    }
    Err(AutomationError::Forbidden(format!(
        "only the owner of “{}” ({}) or an admin may change, pause, resume, run or delete it",
        automation.title, automation.owner
    )))
}

/// Validates and stores a new automation owned by `owner`.
pub async fn create(
    store: &Store,
    tenant: &TenantId,
    owner: &UserId,
    origin: Option<&SessionId>,
    draft: AutomationDraft,
    via: &str,
) -> Result<Automation> {
    check_creator(store, tenant, owner).await?;
    let title = required_text(&draft.title, "title")?;
    let instructions = required_text(&draft.instructions, "instructions")?;
    let timezone = match draft.timezone.as_deref().map(str::trim) {
        Some(tz) if !tz.is_empty() => tz.to_owned(),
        _ => tenant_timezone(store, tenant).await?,
    };
    let schedule = schedule_of(draft.cron.as_deref(), draft.fire_at.as_deref(), &timezone)?
        .ok_or_else(|| {
            AutomationError::Invalid(
                "say when it runs: `cron` (\"0 9 * * 1-5\") or `fire_at` (\"2026-12-01T09:00\")"
                    .into(),
            )
        })?;
    let mut settings = AutomationSettings {
        persona: draft.persona.filter(|p| !p.trim().is_empty()),
        model: draft.model.filter(|m| !m.trim().is_empty()),
        target: draft.target,
        standing_rules: Vec::new(),
        requested_rules: Vec::new(),
        max_runs: draft.max_runs,
    };
    for rule in draft.requested_rules {
        if !settings.requested_rules.contains(&rule) {
            settings.requested_rules.push(rule);
        }
    }
    for permission in draft.permissions {
        let (tool, target) = (permission.tool.trim(), permission.target.trim());
        if permission.access == "write" && !tool.is_empty() && !target.is_empty() {
            settings.add_rule(StandingRule {
                tool: tool.to_owned(),
                target: target.to_owned(),
            });
        }
    }
    let enabled = draft.enabled.unwrap_or(true);
    let now = store.clock_ms();
    let next_run_ms = enabled
        .then(|| schedule.next_after(now, 0, settings.max_runs))
        .flatten();
    let new = NewAutomation {
        title,
        instructions,
        schedule: schedule.to_json(),
        owner: owner.clone(),
        origin_session_id: origin.cloned(),
        enabled,
        next_run_ms,
        settings: settings.to_json(),
    };
    let created = store.automations().create(tenant, &new).await?;
    let by = ChangedBy { user: owner, via };
    audit(
        store,
        tenant,
        &created,
        "automation_created",
        by,
        Vec::new(),
    )
    .await?;
    Ok(created)
}

/// Deletes an automation and its run history, as `by`; `false` if the tenant has no such one.
pub async fn delete(
    store: &Store,
    tenant: &TenantId,
    automation: &Automation,
    by: ChangedBy<'_>,
) -> Result<bool> {
    let deleted = store.automations().delete(tenant, &automation.id).await?;
    if deleted {
        audit(
            store,
            tenant,
            automation,
            "automation_deleted",
            by,
            Vec::new(),
        )
        .await?;
    }
    Ok(deleted)
}

/// Applies a change; `None` if the tenant has no such automation.
pub async fn change(
    store: &Store,
    tenant: &TenantId,
    id: &AutomationId,
    by: ChangedBy<'_>,
    change: AutomationChange,
) -> Result<Option<Automation>> {
    let Some(mut automation) = store.automations().get(tenant, id).await? else {
        return Ok(None);
    };
    let mut schedule = Schedule::from_json(&automation.schedule)
        .map_err(|e| AutomationError::Invalid(format!("the stored schedule is unusable: {e}")))?;
    let mut settings = AutomationSettings::from_json(&automation.settings);
    if let Some(title) = &change.title {
        automation.title = required_text(title, "title")?;
    }
    if let Some(instructions) = &change.instructions {
        automation.instructions = required_text(instructions, "instructions")?;
    }
    let timezone = change
        .timezone
        .clone()
        .unwrap_or_else(|| schedule.timezone().to_owned());
    let rescheduled =
        match schedule_of(change.cron.as_deref(), change.fire_at.as_deref(), &timezone)? {
            Some(new) => Some(new),
            None if change.timezone.is_some() => Some(
                match &schedule {
                    Schedule::Cron { cron, .. } => Schedule::cron(cron, &timezone),
                    Schedule::Once { fire_at, .. } => Schedule::once(fire_at, &timezone),
                }
                .map_err(|e| AutomationError::Invalid(e.0))?,
            ),
            None => None,
        };
    let changed = change.changed();
    let timing_changed =
        rescheduled.is_some() || change.enabled.is_some() || change.max_runs.is_some();
    if let Some(new) = rescheduled {
        schedule = new;
        automation.schedule = schedule.to_json();
    }
    if let Some(enabled) = change.enabled {
        automation.enabled = enabled;
    }
    if let Some(max_runs) = change.max_runs {
        settings.max_runs = Some(max_runs);
    }
    if let Some(target) = change.target {
        settings.target = Some(target);
    }
    if let Some(entry) = &change.revoke {
        let before = settings.standing_rules.len();
        settings
            .standing_rules
            .retain(|r| r.entry() != entry.trim());
        if settings.standing_rules.len() == before {
            return Err(AutomationError::Invalid(format!(
                "no standing rule {entry:?}; rules look like \"<tool> <target>\""
            )));
        }
    }
    if timing_changed {
        automation.next_run_ms = automation
            .enabled
            .then(|| {
                let now = store.clock_ms();
                schedule.next_after(now, automation.run_count, settings.max_runs)
            })
            .flatten();
    }
    automation.settings = settings.to_json();
    let updated = store.automations().update(&automation).await?;
    if let Some(updated) = &updated {
        audit(store, tenant, updated, "automation_changed", by, changed).await?;
    }
    Ok(updated)
}

/// The automation as the API and the agent see it; times are shown in `viewer_tz` when given.
pub fn public_view(automation: &Automation, viewer_tz: Option<&str>) -> Value {
    let schedule = Schedule::from_json(&automation.schedule).ok();
    let settings = AutomationSettings::from_json(&automation.settings);
    let zone = viewer_tz
        .map(str::to_owned)
        .or_else(|| schedule.as_ref().map(|s| s.timezone().to_owned()))
        .unwrap_or_else(|| "UTC".into());
    json!({
        "id": automation.id,
        "title": automation.title,
        "instructions": automation.instructions,
        "schedule": schedule.as_ref().map(Schedule::describe),
        "schedule_raw": automation.schedule,
        "enabled": automation.enabled,
        "owner": automation.owner,
        "persona": settings.persona,
        "model": settings.model,
        "target": settings.target,
        "max_runs": settings.max_runs,
        "always_allowed": settings.standing_rules.iter().map(|r| json!({"entry": r.entry(), "tool": r.tool, "target": r.target})).collect::<Vec<_>>(),
        "requested_rules": settings.requested_rules.iter().map(|r| json!({"entry": r.entry(), "tool": r.tool, "target": r.target})).collect::<Vec<_>>(),
        "next_run_ms": automation.next_run_ms,
        "next_run": automation.next_run_ms.map(|ms| format_in(ms, &zone)),
        "last_run_ms": automation.last_run_ms,
        "last_status": automation.last_status,
        "run_count": automation.run_count,
        "running_run_id": automation.running_run_id,
        "created_at_ms": automation.created_at_ms,
    })
}

fn schedule_of(
    cron: Option<&str>,
    fire_at: Option<&str>,
    timezone: &str,
) -> Result<Option<Schedule>> {
    let invalid = |e: ScheduleError| AutomationError::Invalid(e.0);
    match (cron.map(str::trim), fire_at.map(str::trim)) {
        (Some(cron), Some(_)) if !cron.is_empty() => Err(AutomationError::Invalid(
            "give either `cron` or `fire_at`, not both".into(),
        )),
        (Some(cron), _) if !cron.is_empty() => {
            Schedule::cron(cron, timezone).map(Some).map_err(invalid)
        }
        (_, Some(at)) if !at.is_empty() => Schedule::once(at, timezone).map(Some).map_err(invalid),
        _ => Ok(None),
    }
}

fn required_text(text: &str, field: &str) -> Result<String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AutomationError::Invalid(format!(
            "`{field}` must not be empty"
        )));
    }
    Ok(text.to_owned())
}
