//! The agent's scheduling tools: `create_scheduled_task`, `list_scheduled_tasks`,
//! `update_scheduled_task`, `delete_scheduled_task`.
//!
//! Invariants: every change goes through the automation service, so the agent validates and is
//! refused exactly as the API is; none of these tools works inside a scheduled run (a run must
//! never schedule, reschedule or remove automations — the engine hides the tools there and this is
//! the second guard); and the agent can ask for standing rules only when creating, where a person
//! approves the whole request — it can neither add nor revoke them afterwards; only the task's
//! owner or an admin may change or delete it, whoever the agent is working for.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_protocol::{AutomationId, Surface};

use super::{AutomationChange, AutomationDraft, ChangedBy, RunTarget, StandingRule};
use crate::args::simple_tool;
use crate::{RepoError, RiskLevel, Tool, ToolContext, ToolError, ToolMetadata, ToolResult};

const LIST_LIMIT: u32 = 200;

/// Arguments of `create_scheduled_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateArgs {
    /// A short title, shown in lists and on result cards.
    title: String,
    /// What each run should do, self-contained: the run starts without this conversation.
    instructions: String,
    /// A 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5"
    /// for weekdays at 09:00. Give this or `fire_at`.
    #[serde(default)]
    cron: Option<String>,
    /// A one-off time: "2026-12-01T09:00" (in `timezone`) or RFC 3339 with an offset. Give this
    /// or `cron`.
    #[serde(default)]
    fire_at: Option<String>,
    /// An IANA zone such as "Asia/Shanghai"; the workspace's zone when absent.
    #[serde(default)]
    timezone: Option<String>,
    /// Calls the runs need without anyone there to approve them: one tool and one exact target
    /// each. Only `write` entries become standing permissions; `read` entries are disclosed.
    #[serde(default)]
    permissions: Vec<PermissionArg>,
}

/// One permission a new scheduled task asks for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PermissionArg {
    /// The tool, e.g. "web_fetch".
    tool: String,
    /// Its exact target (a URL, a path, a channel id).
    target: String,
    /// `read` or `write`.
    access: PermissionAccess,
}

/// What a requested permission allows.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PermissionAccess {
    /// Disclosed to the approver only.
    Read,
    /// Becomes a standing permission of the task's runs.
    Write,
}

/// Arguments of `list_scheduled_tasks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {}

/// Arguments of `update_scheduled_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateArgs {
    /// The task's id, as `list_scheduled_tasks` shows it.
    id: String,
    /// `false` pauses the task, `true` resumes it.
    #[serde(default)]
    enabled: Option<bool>,
    /// New instructions.
    #[serde(default)]
    instructions: Option<String>,
    /// A new 5-field cron expression (makes it recurring).
    #[serde(default)]
    cron: Option<String>,
    /// A new title.
    #[serde(default)]
    title: Option<String>,
    /// A new one-off time (makes it run once).
    #[serde(default)]
    fire_at: Option<String>,
    /// A new IANA zone for its schedule.
    #[serde(default)]
    timezone: Option<String>,
}

/// Arguments of `delete_scheduled_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteArgs {
    /// The task's id, as `list_scheduled_tasks` shows it.
    id: String,
}

/// Metadata of a tool that changes the tenant's automations: medium risk, asks every time.
fn change_metadata() -> ToolMetadata {
    ToolMetadata {
        risk_level: RiskLevel::Medium,
        requires_approval: true,
        category: "automation".to_owned(),
        target_arg: None,
        idempotent: false,
    }
}

simple_tool!(
    /// `create_scheduled_task(title, instructions, cron?, fire_at?, timezone?, permissions?)`.
    CreateScheduledTask,
    "create_scheduled_task",
    CreateArgs,
    "Schedule a task to run later without the user: recurring (`cron`) or once (`fire_at`). Each \
     run starts fresh with only `instructions`, so make them self-contained. When called from a \
     chat, results are posted to this thread. List in `permissions` the exact calls the runs must \
     make without approval. The user approves the task before it is saved.",
    change_metadata(),
    create_task
);

simple_tool!(
    /// `list_scheduled_tasks()`.
    ListScheduledTasks,
    "list_scheduled_tasks",
    ListArgs,
    "List this workspace's scheduled tasks with their ids, schedules, next runs and standing \
     permissions.",
    ToolMetadata::read("automation"),
    list_tasks
);

simple_tool!(
    /// `update_scheduled_task(id, enabled?, instructions?, cron?, title?, fire_at?, timezone?)`.
    UpdateScheduledTask,
    "update_scheduled_task",
    UpdateArgs,
    "Change a scheduled task: pause it (`enabled: false`), resume it (`enabled: true`), or change \
     its title, instructions, schedule or zone. Fields left out stay as they are. Only the task's \
     owner or an admin may change it.",
    change_metadata(),
    update_task
);

simple_tool!(
    /// `delete_scheduled_task(id)`.
    DeleteScheduledTask,
    "delete_scheduled_task",
    DeleteArgs,
    "Delete a scheduled task and its run history for good (pause it instead to keep it). Only \
     the task's owner or an admin may delete it.",
    change_metadata(),
    delete_task
);

/// The four scheduling tools.
pub fn scheduling_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(CreateScheduledTask),
        Arc::new(ListScheduledTasks),
        Arc::new(UpdateScheduledTask),
        Arc::new(DeleteScheduledTask),
    ]
}

async fn create_task(ctx: &ToolContext, args: CreateArgs) -> ToolResult {
    let place = outside_scheduled_run(ctx).await?;
    let target = place.filter(|p| p.surface.is_chat());
    let draft = AutomationDraft {
        title: args.title,
        instructions: args.instructions,
        cron: args.cron,
        fire_at: args.fire_at,
        timezone: args.timezone,
        target,
        // A run's standing rules are never granted by the call that creates it: whoever
        // approved this call may be its requester. They wait in `requested_rules` until an
        // approver or an admin grants them (`POST /v1/automations/{id}/rules/approve`), which
        // validates them as the engine validates minted rules.
        requested_rules: args
            .permissions
            .into_iter()
            .filter(|p| matches!(p.access, PermissionAccess::Write))
            .filter(|p| !p.tool.trim().is_empty() && !p.target.trim().is_empty())
            .map(|p| StandingRule {
                tool: p.tool.trim().to_owned(),
                target: p.target.trim().to_owned(),
            })
            .collect(),
        ..AutomationDraft::default()
    };
    let automation = ctx
        .repos
        .automations
        .create(
            &ctx.tenant_id,
            &ctx.user_id,
            Some(&ctx.session_id),
            draft,
            "agent",
        )
        .await
        .map_err(|e| automation_error(&e))?;
    tracing::info!(
        tenant = %ctx.tenant_id,
        session = %ctx.session_id,
        automation = automation["id"].as_str().unwrap_or_default(),
        "Scheduled task created."
    );
    Ok(summary(&automation))
}

async fn list_tasks(ctx: &ToolContext, _args: ListArgs) -> ToolResult {
    outside_scheduled_run(ctx).await?;
    let tasks = ctx
        .repos
        .automations
        .list(&ctx.tenant_id, LIST_LIMIT)
        .await
        .map_err(|e| automation_error(&e))?;
    Ok(json!({"tasks": tasks}))
}

async fn update_task(ctx: &ToolContext, args: UpdateArgs) -> ToolResult {
    outside_scheduled_run(ctx).await?;
    let request = AutomationChange {
        title: args.title,
        instructions: args.instructions,
        cron: args.cron,
        fire_at: args.fire_at,
        timezone: args.timezone,
        enabled: args.enabled,
        ..AutomationChange::default()
    };
    if request.title.is_none()
        && request.instructions.is_none()
        && request.cron.is_none()
        && request.fire_at.is_none()
        && request.timezone.is_none()
        && request.enabled.is_none()
    {
        return Err(ToolError::new(
            "nothing to change: give `enabled`, `title`, `instructions`, `cron`, `fire_at` or `timezone`",
        ));
    }
    let id = AutomationId::from(args.id.trim());
    let by = ChangedBy {
        user: &ctx.user_id,
        via: "agent",
    };
    let updated = ctx
        .repos
        .automations
        .change(&ctx.tenant_id, &id, by, request)
        .await
        .map_err(|e| automation_error(&e))?
        .ok_or_else(|| no_such(&args.id))?;
    tracing::info!(
        tenant = %ctx.tenant_id,
        session = %ctx.session_id,
        automation = %id,
        "Scheduled task changed."
    );
    Ok(summary(&updated))
}

async fn delete_task(ctx: &ToolContext, args: DeleteArgs) -> ToolResult {
    outside_scheduled_run(ctx).await?;
    let id = AutomationId::from(args.id.trim());
    let by = ChangedBy {
        user: &ctx.user_id,
        via: "agent",
    };
    let deleted = ctx
        .repos
        .automations
        .delete(&ctx.tenant_id, &id, by)
        .await
        .map_err(|e| automation_error(&e))?;
    if !deleted {
        return Err(no_such(&args.id));
    }
    tracing::info!(
        tenant = %ctx.tenant_id,
        session = %ctx.session_id,
        automation = %id,
        "Scheduled task deleted."
    );
    Ok(json!({"ok": true, "id": id, "deleted": true}))
}

/// Where the calling session lives (if stored), or an error when it is a scheduled run.
async fn outside_scheduled_run(ctx: &ToolContext) -> Result<Option<RunTarget>, ToolError> {
    let place = ctx
        .repos
        .automations
        .session_place(&ctx.tenant_id, &ctx.session_id)
        .await
        .map_err(|e| automation_error(&e))?;
    if place
        .as_ref()
        .is_some_and(|p| p.surface == Surface::Scheduler)
    {
        return Err(ToolError::new(
            "scheduling tools are not available inside a scheduled run; the schedule already exists",
        ));
    }
    Ok(place)
}

/// What the agent is told after a create or an update, from the automation's view.
fn summary(view: &Value) -> Value {
    let mut result = json!({"ok": true});
    for field in [
        "id",
        "title",
        "enabled",
        "schedule",
        "next_run",
        "next_run_ms",
        "always_allowed",
        "requested_rules",
    ] {
        result[field] = view[field].clone();
    }
    if view["requested_rules"]
        .as_array()
        .is_some_and(|r| !r.is_empty())
    {
        result["note"] = json!(
            "the calls in requested_rules wait in the inbox for an approver or an admin to grant \
             them; until then, runs ask before making them"
        );
    }
    result
}

fn no_such(id: &str) -> ToolError {
    ToolError::new(format!(
        "no scheduled task (automation) with id {id:?}; call list_scheduled_tasks to see the ids"
    ))
}

fn automation_error(error: &RepoError) -> ToolError {
    match error {
        RepoError::Invalid(message) | RepoError::Refused(message) => {
            ToolError::new(message.clone())
        }
        RepoError::Unavailable(_) => store_error(error),
    }
}

fn store_error(error: &RepoError) -> ToolError {
    tracing::warn!(error = %error, "Automation store call failed.");
    ToolError::new("the automation store is unavailable; try again later")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_update_schema_cannot_touch_standing_rules_or_the_target() {
        let schema = crate::args::schema::<UpdateArgs>();
        let properties = schema["properties"].as_object().unwrap();
        for hidden in ["revoke", "target", "permissions", "max_runs"] {
            assert!(!properties.contains_key(hidden), "{hidden}");
        }
        let parsed = crate::args::parse::<UpdateArgs>(
            "update_scheduled_task",
            json!({"id": "a", "revoke": "web_fetch https://x"}),
        );
        assert!(
            parsed
                .unwrap_err()
                .message
                .contains("unknown field `revoke`")
        );
    }
}
