//! Automations over HTTP: `/v1/automations…` and firing wake events, `/v1/wakes/events`.
//!
//! Invariants: every request goes through the automation service, so the API validates, refuses
//! and shows automations exactly as the agent's tools and the chat commands do; only an
//! automation's owner or a tenant admin changes, runs or deletes it; an automation of another
//! tenant is indistinguishable from one that does not exist (404); the standing rules a request
//! asks for pass the engine's grant validation or the request is refused (400), and they become
//! rules at once only for an approver or an admin: a member's wait on the automation
//! (`requested_rules`) until an approver or an admin allows or denies them
//! (`POST /v1/automations/{id}/rules/approve` or `…/rules/deny`).

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tracing::info;
use workmate_engine::automations::{
    AutomationChange, AutomationDraft, ChangedBy, PermissionRequest, ask_for_rules, change,
    check_approver, check_manager, close_rule_requests, create, delete as delete_automation,
    may_grant_rules, public_view, settle_requested_rules,
};
use workmate_engine::permissions::RequestedPermission;
use workmate_protocol::AutomationId;
use workmate_store::Automation;
use workmate_tools::automations::{StandingRule, zone};

use super::Principal;
use super::dto::automation_run;
use crate::http::{ApiError, AppState};

/// Automations listed at most.
const LIST_LIMIT: u32 = 500;
/// Runs listed when `limit` is absent.
const RUNS_DEFAULT: u32 = 20;
/// Runs listed at most.
const RUNS_MAX: u32 = 200;

/// `GET /v1/automations` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    /// The IANA zone `next_run` is shown in (each automation's own zone when absent).
    tz: Option<String>,
}

/// `GET /v1/automations?tz=Asia/Shanghai` → `{"automations": [...]}`, soonest first.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let tz = match query.tz.as_deref().map(str::trim) {
        Some(tz) if !tz.is_empty() => {
            zone(tz).map_err(|e| ApiError::BadRequest(e.to_string()))?;
            Some(tz)
        }
        _ => None,
    };
    let automations = state
        .store
        .automations()
        .list(&caller.tenant, LIST_LIMIT)
        .await?;
    let views: Vec<Value> = automations.iter().map(|a| public_view(a, tz)).collect();
    Ok(Json(json!({ "automations": views })))
}

/// `POST /v1/automations` with an [`AutomationDraft`] → `201` and the automation. The caller owns
/// it; the tenant's `automation_creators` setting decides who may create.
pub(crate) async fn create_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let mut draft: AutomationDraft = body_of(
        &body,
        r#"{"title": "Sales digest", "instructions": "…", "cron": "0 9 * * 1-5"}"#,
    )?;
    let rules = valid_rules(&state, &draft.permissions)?;
    let granted_now = may_grant_rules(&state.store, &caller.tenant, &caller.actor.user_id).await?;
    // The service turns `write` permissions into rules; only validated ones reach it, and only
    // when the caller may grant them.
    draft.permissions = if granted_now {
        rules
            .iter()
            .map(|r| PermissionRequest {
                tool: r.tool.clone(),
                target: r.target.clone(),
                access: "write".into(),
            })
            .collect()
    } else {
        draft.requested_rules = rules.clone();
        Vec::new()
    };
    let automation = create(
        &state.store,
        &caller.tenant,
        &caller.actor.user_id,
        None,
        draft,
        "http",
    )
    .await?;
    info!(tenant = %caller.tenant, automation = %automation.id, by = %caller.actor.user_id, "Automation created.");
    if !granted_now && !rules.is_empty() {
        ask_for_rules(&state.store, &caller.tenant, &automation).await?;
        let entries: Vec<String> = rules.iter().map(StandingRule::entry).collect();
        info!(tenant = %caller.tenant, automation = %automation.id, by = %caller.actor.user_id, ?entries, "Standing rules wait for an approver.");
    }
    Ok((StatusCode::CREATED, Json(public_view(&automation, None))))
}

/// The standing rules `permissions` ask for, validated as the engine validates minted rules;
/// a `write` entry it would not keep (no such tool, a tool without a target argument, a blank
/// target) or an unknown access refuses the whole request.
fn valid_rules(
    state: &AppState,
    permissions: &[PermissionRequest],
) -> Result<Vec<StandingRule>, ApiError> {
    let mut rules = Vec::new();
    for permission in permissions {
        let requested = RequestedPermission {
            tool: permission.tool.trim().to_owned(),
            target: permission.target.clone(),
            access: permission.access.trim().to_owned(),
        };
        match requested.access.as_str() {
            "read" => continue,
            "write" => {}
            other => {
                return Err(ApiError::BadRequest(format!(
                    "permission access {other:?} of {:?} is neither \"read\" nor \"write\"",
                    requested.tool
                )));
            }
        }
        let entry = grantable(state, &requested);
        let Some(entry) = entry else {
            return Err(ApiError::BadRequest(format!(
                "{:?} on {:?} cannot be a standing rule: a rule names one tool that declares a \
                 target (such as send_message) and one exact, non-blank target",
                requested.tool,
                requested.target.trim()
            )));
        };
        if let Some((tool, target)) = entry.split_once(' ') {
            let rule = StandingRule {
                tool: tool.to_owned(),
                target: target.to_owned(),
            };
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    Ok(rules)
}

/// The rule entry (`"<tool> <target>"`) the engine would mint for `requested`, if any.
fn grantable(state: &AppState, requested: &RequestedPermission) -> Option<String> {
    state.hub.grantable_rule(requested)
}

/// `POST /v1/automations/{id}/rules/approve` → the automation with the standing rules its owner
/// asked for granted; for approvers and admins. `400` when none are waiting.
pub(crate) async fn approve_rules(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    settle(&state, &caller, &id, true).await
}

/// `POST /v1/automations/{id}/rules/deny` → the automation with the standing rules its owner
/// asked for dropped; for approvers and admins. `400` when none are waiting.
pub(crate) async fn deny_rules(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    settle(&state, &caller, &id, false).await
}

async fn settle(
    state: &AppState,
    caller: &Principal,
    id: &str,
    allow: bool,
) -> Result<Json<Value>, ApiError> {
    let automation = found(state, caller, id).await?;
    check_approver(&state.store, &caller.tenant, &caller.actor.user_id).await?;
    if allow && automation.owner == caller.actor.user_id {
        return Err(ApiError::Forbidden(format!(
            "{} asked for these rules and cannot grant them; another approver or an admin must",
            caller.actor.user_id
        )));
    }
    // Checked again: the tools may have changed since the rules were asked for.
    let still_valid = |rule: &StandingRule| {
        let requested = RequestedPermission {
            tool: rule.tool.clone(),
            target: rule.target.clone(),
            access: "write".into(),
        };
        grantable(state, &requested).is_some()
    };
    let (settled, granted) = settle_requested_rules(
        &state.store,
        &caller.tenant,
        &automation.id,
        allow,
        still_valid,
    )
    .await?
    .ok_or_else(|| missing(id))?;
    close_rule_requests(
        &state.store,
        &caller.tenant,
        &settled.id,
        &caller.actor.user_id,
        allow,
    )
    .await?;
    let entries: Vec<String> = granted.iter().map(StandingRule::entry).collect();
    info!(tenant = %caller.tenant, automation = %settled.id, by = %caller.actor.user_id, allow, ?entries, "Requested standing rules settled.");
    Ok(Json(public_view(&settled, None)))
}

/// `GET /v1/automations/{id}`.
pub(crate) async fn get_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let automation = found(&state, &caller, &id).await?;
    Ok(Json(public_view(&automation, None)))
}

/// `PATCH /v1/automations/{id}` with an [`AutomationChange`]: the owner or an admin changes,
/// pauses (`"enabled": false`), resumes or revokes a standing rule (`"revoke": "<tool> <target>"`).
pub(crate) async fn update(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let request: AutomationChange = body_of(&body, r#"{"enabled": false}"#)?;
    let automation = managed(&state, &caller, &id).await?;
    let by = ChangedBy {
        user: &caller.actor.user_id,
        via: "http",
    };
    let updated = change(&state.store, &caller.tenant, &automation.id, by, request)
        .await?
        .ok_or_else(|| missing(&id))?;
    info!(tenant = %caller.tenant, automation = %updated.id, by = %caller.actor.user_id, "Automation changed.");
    Ok(Json(public_view(&updated, None)))
}

/// `DELETE /v1/automations/{id}` → `204`: the automation and its run history, for the owner or
/// an admin.
pub(crate) async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let automation = managed(&state, &caller, &id).await?;
    let by = ChangedBy {
        user: &caller.actor.user_id,
        via: "http",
    };
    if !delete_automation(&state.store, &caller.tenant, &automation, by).await? {
        return Err(missing(&id));
    }
    info!(tenant = %caller.tenant, automation = %automation.id, by = %caller.actor.user_id, "Automation deleted.");
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/automations/{id}/run` → `202 {"run": …, "session_id": …}`: a run by hand, for the
/// owner or an admin; `409` (with the going run as `detail`) while a run is going.
pub(crate) async fn run(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let automation = managed(&state, &caller, &id).await?;
    match state
        .scheduler
        .run_now(&caller.tenant, &automation.id, &caller.actor.user_id)
        .await
    {
        Ok(run) => Ok((
            StatusCode::ACCEPTED,
            Json(json!({ "run": automation_run(&run), "session_id": run.session_id })),
        )),
        // The scheduler refuses a missing automation or one whose run is going; which of the two
        // is read from the store, not from the message.
        Err(workmate_engine::Error::Rejected(reason)) => {
            let now = found(&state, &caller, &id).await?;
            let going = match &now.running_run_id {
                Some(run) => state.store.automations().run(&caller.tenant, run).await?,
                None => None,
            };
            Err(ApiError::Conflict {
                message: reason,
                detail: going.as_ref().map_or(Value::Null, automation_run),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /v1/automations/{id}/runs` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunsQuery {
    limit: Option<u32>,
}

/// `GET /v1/automations/{id}/runs?limit=20` → `{"runs": [...]}`, newest first.
pub(crate) async fn runs(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    Query(query): Query<RunsQuery>,
) -> Result<Json<Value>, ApiError> {
    let automation = found(&state, &caller, &id).await?;
    let limit = query.limit.unwrap_or(RUNS_DEFAULT).clamp(1, RUNS_MAX);
    let runs = state
        .store
        .automations()
        .runs(&caller.tenant, &automation.id, limit)
        .await?;
    Ok(Json(
        json!({ "runs": runs.iter().map(automation_run).collect::<Vec<_>>() }),
    ))
}

/// `POST /v1/wakes/events` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventBody {
    key: String,
}

/// `POST /v1/wakes/events` `{"key": "deploy:prod"}` → `{"woken": n}`: the sessions waiting on
/// that event become due (an admin's event: the tenant's; anyone else's: their own), and the
/// scheduler's next tick resumes them.
pub(crate) async fn fire_event(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let body: EventBody = body_of(&body, r#"{"key": "deploy:prod"}"#)?;
    let key = body.key.trim();
    workmate_tools::check_event_key(key).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let wakes = state.store.wakes();
    let woken = if caller.is_admin(&state.store).await? {
        wakes.fire_event(&caller.tenant, key).await?
    } else {
        wakes
            .fire_event_for_owner(&caller.tenant, key, &caller.actor.user_id)
            .await?
    };
    info!(tenant = %caller.tenant, key, woken, by = %caller.actor.user_id, "Wake event fired.");
    Ok(Json(json!({ "woken": woken })))
}

/// The JSON body as `T`, or a 400 that says what is wrong and shows an example.
fn body_of<T: DeserializeOwned>(body: &[u8], example: &str) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("invalid body: {e}; e.g. {example}")))
}

/// The tenant's automation `id`, or 404.
async fn found(state: &AppState, caller: &Principal, id: &str) -> Result<Automation, ApiError> {
    state
        .store
        .automations()
        .get(&caller.tenant, &AutomationId::from(id))
        .await?
        .ok_or_else(|| missing(id))
}

/// The tenant's automation `id` if the caller may manage it: 404 or 403 otherwise.
async fn managed(state: &AppState, caller: &Principal, id: &str) -> Result<Automation, ApiError> {
    let automation = found(state, caller, id).await?;
    check_manager(
        &state.store,
        &caller.tenant,
        &automation,
        &caller.actor.user_id,
    )
    .await?;
    Ok(automation)
}

fn missing(id: &str) -> ApiError {
    ApiError::Missing(format!("automation {id} not found"))
}
