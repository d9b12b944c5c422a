//! The caller's tenant over HTTP: `GET` and `PATCH /v1/tenant/settings`.
//!
//! Invariants: anyone of the tenant reads its settings, only a tenant admin changes them; a
//! `PATCH` is applied whole or not at all (every key is validated before the one write) and is
//! audited; validation is [`workmate_engine::tenant_settings`]'s, the same the chat command uses.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, State};
use serde_json::{Map, Value, json};

use super::Principal;
use crate::http::{ApiError, AppState};
use workmate_engine::tenant_settings::{SettingError, update};

/// `GET /v1/tenant/settings` → `{"tenant_id", "settings": {...}}`, as stored.
pub(crate) async fn settings(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
) -> Result<Json<Value>, ApiError> {
    let tenant = state
        .store
        .tenants()
        .get(&caller.tenant)
        .await?
        .ok_or_else(|| ApiError::Missing(format!("tenant {} not found", caller.tenant)))?;
    Ok(Json(
        json!({ "tenant_id": caller.tenant, "settings": tenant.settings }),
    ))
}

/// `PATCH /v1/tenant/settings` with `{"timezone": "Asia/Shanghai", "permissions": null, …}`:
/// sets each key (null restores its default) → the new settings in the `GET` shape. Admins only
/// (`403`); `400` names the bad key or value, and then nothing changed.
pub(crate) async fn change(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    caller
        .require_admin(&state.store, "change its settings")
        .await?;
    let changes: Map<String, Value> = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "invalid body: {e}; send an object of settings, e.g. {{\"timezone\": \"Asia/Shanghai\"}}"
        ))
    })?;
    let settings = update(
        &state.store,
        &caller.tenant,
        &caller.actor.user_id,
        &changes,
        "http",
    )
    .await
    .map_err(|e| match e {
        SettingError::Store(e) => ApiError::from(e),
        other => ApiError::BadRequest(other.to_string()),
    })?;
    Ok(Json(
        json!({ "tenant_id": caller.tenant, "settings": settings }),
    ))
}
