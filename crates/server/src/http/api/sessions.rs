//! Creating sessions, sending them commands, reading their history.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_engine::{Accepted, Submitted};
use workmate_protocol::{Command, PermissionMode, SessionId, Surface};
use workmate_store::{NewSession, ResolveOutcome, SessionKey};

use super::Principal;
use super::dto::{inbox_item, session as session_json};
use super::visible;
use crate::http::{ApiError, AppState};
use crate::recovery::COMMAND_LEASE;

/// `POST /v1/sessions` body; every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewSessionBody {
    title: Option<String>,
    model: Option<String>,
    persona: Option<String>,
    mode: Option<PermissionMode>,
    #[serde(default)]
    unattended: bool,
}

/// `POST /v1/sessions` → `201 {session_id}`.
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let body: NewSessionBody = if body.iter().all(u8::is_ascii_whitespace) {
        NewSessionBody::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::BadRequest(format!("invalid session body: {e}")))?
    };
    let mode = body.mode.unwrap_or_default();
    // The same rule as a later mode change: members choose among the tenant's `modes_allowed`.
    workmate_engine::check_mode(&state.store, &caller.tenant, &caller.actor.user_id, mode).await?;
    // A persona must be one anyone may choose: a built-in, or installed and consented to.
    let persona = match &body.persona {
        Some(id) => {
            workmate_personas::Personas::new(state.store.clone())
                .usable(&caller.tenant, id)
                .await?
        }
        None => workmate_personas::default_persona(),
    };
    let new = NewSession {
        key: SessionKey {
            surface: Surface::Http,
            chat_id: uuid::Uuid::now_v7().to_string(),
            thread_id: String::new(),
        },
        owner: caller.actor.user_id.clone(),
        title: body.title,
        model: body
            .model
            .or(persona.model)
            .unwrap_or_else(|| state.hub.config().default_model.clone()),
        persona: persona.id,
        mode,
        unattended: body.unattended,
    };
    let record = state.hub.create_session(&caller.tenant, &new).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "session_id": record.id,
            "model": record.model,
            "mode": record.mode,
            "persona": record.persona,
        })),
    ))
}

/// `GET /v1/sessions?limit=100`: the sessions the caller may see, most recently changed first.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let store = &state.store;
    let sight = visible::sight(store, &caller).await?;
    let limit = query.limit.unwrap_or(100).clamp(1, 1000);
    let sessions = store
        .sessions()
        .list_visible(&caller.tenant, &sight, limit)
        .await?;
    Ok(Json(
        json!({ "sessions": sessions.iter().map(session_json).collect::<Vec<_>>() }),
    ))
}

/// `GET /v1/sessions` filters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    limit: Option<u32>,
}

/// `GET /v1/sessions/{id}`: the session, if the caller may see it.
pub(crate) async fn get_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let record = visible::session(&state.store, &caller, &SessionId::from(id)).await?;
    Ok(Json(json!({ "session": session_json(&record) })))
}

/// `POST /v1/sessions/{id}/commands`: a [`Command`] as JSON. Who sends it is the token's user,
/// whatever the body says.
/// The command is stored before it is applied and before the answer: a `2xx` means it is
/// durable and runs exactly once, across crashes. An optional `Idempotency-Key` header (per
/// caller, remembered for a day) makes a repeated request change nothing: it answers `202`
/// `{"accepted": "duplicate"}`. A command that cannot run yet (another replica drives the
/// session) answers `202` `{"accepted": "queued"}` and runs as soon as it can.
pub(crate) async fn command(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let idempotency_key =
        idempotency_key(&headers)?.map(|key| format!("{}:{key}", caller.actor.user_id));
    let mut value: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the body is not JSON: {e}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err(ApiError::BadRequest(
            "a command is a JSON object with a \"type\"".into(),
        ));
    };
    let actor =
        serde_json::to_value(&caller.actor).map_err(|e| ApiError::Internal(e.to_string()))?;
    object.insert("author".into(), actor.clone());
    object.insert("actor".into(), actor);
    object.insert("via".into(), json!(Surface::Http));
    object.entry("attachments").or_insert_with(|| json!([]));
    let command = parse_command(value)?;
    // Authority is the engine's (only the owner or an admin acts on a session): a command from
    // anyone else is refused with 403 and the reason, and changes nothing.
    let session = SessionId::from(id);
    let submitted = state
        .hub
        .submit_stored(
            &caller.tenant,
            &session,
            command,
            idempotency_key.as_deref(),
            COMMAND_LEASE,
        )
        .await?;
    let accepted = match submitted {
        Submitted::Applied(accepted) => accepted,
        Submitted::Queued => {
            return Ok((StatusCode::ACCEPTED, Json(json!({ "accepted": "queued" }))));
        }
        Submitted::Duplicate => {
            return Ok((
                StatusCode::ACCEPTED,
                Json(json!({ "accepted": "duplicate" })),
            ));
        }
    };
    Ok(match accepted {
        Accepted::TurnStarted(turn) => (
            StatusCode::ACCEPTED,
            Json(json!({ "accepted": "turn_started", "turn_id": turn })),
        ),
        Accepted::Steered => (StatusCode::ACCEPTED, Json(json!({ "accepted": "steered" }))),
        Accepted::Interrupted { was_running } => (
            StatusCode::ACCEPTED,
            Json(json!({ "accepted": "interrupted", "was_running": was_running })),
        ),
        Accepted::Resolved(outcome) => return resolved(*outcome),
        _ => (StatusCode::OK, Json(json!({ "accepted": "updated" }))),
    })
}

/// The longest `Idempotency-Key` taken.
const MAX_KEY: usize = 255;

/// The request's `Idempotency-Key`, if it sent one: 1 to 255 visible ASCII characters.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            ApiError::BadRequest(format!(
                "Idempotency-Key must be 1 to {MAX_KEY} visible ASCII characters (a UUID, say)"
            ))
        })?;
    Ok(Some(key))
}

/// The answer to a resolve: the item, or 409 with the item as someone else resolved it.
pub(crate) fn resolved(outcome: ResolveOutcome) -> Result<(StatusCode, Json<Value>), ApiError> {
    match outcome {
        ResolveOutcome::Resolved(item) => {
            Ok((StatusCode::OK, Json(json!({ "item": inbox_item(&item) }))))
        }
        ResolveOutcome::AlreadyResolved(item) => Err(ApiError::Conflict {
            message: format!(
                "already resolved by {}",
                item.resolved_by
                    .as_ref()
                    .map_or("someone else", |u| u.as_str())
            ),
            detail: inbox_item(&item),
        }),
        ResolveOutcome::NotFound => Err(ApiError::Missing("no such inbox item".into())),
        // Counted towards the item's quorum; it stays pending until enough approvers agree.
        ResolveOutcome::Counted {
            item,
            approvals,
            required,
        } => {
            let by: Vec<&str> = approvals.iter().map(|a| a.user_id.as_str()).collect();
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({
                    "item": inbox_item(&item),
                    "approvals": { "count": approvals.len(), "required": required, "approved_by": by },
                })),
            ))
        }
    }
}

fn parse_command(value: Value) -> Result<Command, ApiError> {
    // Strip the fields this kind of command does not have, so the server-set identity fields
    // never make an otherwise valid command unreadable.
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let keep: &[&str] = match kind.as_str() {
        "user_message" => &["type", "author", "text", "attachments"],
        "resolve_inbox" => &["type", "item_id", "resolution", "actor", "via"],
        "interrupt" | "retry" | "compact" => &["type", "actor"],
        "set_mode" => &["type", "mode", "actor"],
        "switch_model" => &["type", "model", "actor"],
        "" => return Err(ApiError::BadRequest("a command needs a \"type\"".into())),
        other => {
            return Err(ApiError::BadRequest(format!(
                "unknown command type {other:?}"
            )));
        }
    };
    let Value::Object(mut object) = value else {
        return Err(ApiError::BadRequest("a command is a JSON object".into()));
    };
    object.retain(|key, _| keep.contains(&key.as_str()));
    serde_json::from_value(Value::Object(object))
        .map_err(|e| ApiError::BadRequest(format!("invalid {kind} command: {e}")))
}

/// `PATCH /v1/sessions/{id}` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateBody {
    unattended: bool,
}

/// `PATCH /v1/sessions/{id}` `{"unattended": true}`: its owner (or an admin) marks a session
/// unattended, so its prompts go to the cross-session inbox instead of inline. This changes where
/// people are asked, never what is allowed.
pub(crate) async fn update(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let body: UpdateBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!("invalid body: {e}; e.g. {{\"unattended\": true}}"))
    })?;
    let session = SessionId::from(id);
    let store = &state.store;
    let record = visible::session(store, &caller, &session).await?;
    let admin = store
        .tenants()
        .get_user(&caller.tenant, &caller.actor.user_id)
        .await?
        .is_some_and(|u| u.role == workmate_store::Role::Admin);
    if record.owner != caller.actor.user_id && !admin {
        return Err(ApiError::Forbidden(format!(
            "only the session's owner ({}) or an admin can change it",
            record.owner
        )));
    }
    state
        .hub
        .set_unattended(&caller.tenant, &session, body.unattended)
        .await?;
    Ok(Json(
        json!({ "session_id": session, "unattended": body.unattended }),
    ))
}

/// `GET /v1/sessions/{id}/messages`: the whole history, display-only notices included.
pub(crate) async fn messages(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let session = SessionId::from(id);
    let store = &state.store;
    visible::session(store, &caller, &session).await?;
    // What a turn has published is stored before the history is read.
    state.hub.flushed(&caller.tenant, &session).await?;
    let messages = store.messages().list(&caller.tenant, &session).await?;
    Ok(Json(json!({ "messages": messages })))
}
