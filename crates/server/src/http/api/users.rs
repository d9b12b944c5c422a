//! Offboarding over HTTP: `POST /v1/users/{id}/deprovision`, and the SCIM-style
//! `PATCH /v1/users/{id}` with `active: false` (or `true`, to let a user in again).
//!
//! Invariants: only a tenant admin may call them, and only for users of their own tenant
//! (another tenant's user is `404`); an admin cannot deactivate themselves (so a tenant is never
//! left without the admin who could undo it); every effect is written in one audited transaction
//! ([`workmate_store::OffboardingRepo`]), and a repeated call changes nothing more.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use serde_json::{Value, json};
use workmate_protocol::UserId;
use workmate_store::Offboarded;

use super::Principal;
use crate::http::{ApiError, AppState};

/// `POST /v1/users/{id}/deprovision` → what was revoked.
pub(crate) async fn deprovision(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let user = checked(&state, &caller, &id).await?;
    let done = state
        .hub
        .deprovision(&caller.tenant, &user, &caller.actor)
        .await?;
    Ok(Json(summary(&user, &done)))
}

/// `PATCH /v1/users/{id}` with `{"active": false}`, or a SCIM `PatchOp`
/// (`{"Operations": [{"op": "replace", "path": "active", "value": false}]}`).
pub(crate) async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let body: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("invalid body: {e}")))?;
    let active = active_of(&body).ok_or_else(|| {
        ApiError::BadRequest(
            "send {\"active\": false} (or a SCIM PatchOp replacing `active`); no other user \
             attribute can be changed here"
                .into(),
        )
    })?;
    let user = checked(&state, &caller, &id).await?;
    if active {
        let changed = state
            .store
            .offboarding()
            .reactivate(&caller.tenant, &user, &caller.actor.user_id)
            .await?;
        return Ok(Json(
            json!({ "user_id": user, "active": true, "reactivated": changed }),
        ));
    }
    let done = state
        .hub
        .deprovision(&caller.tenant, &user, &caller.actor)
        .await?;
    Ok(Json(summary(&user, &done)))
}

/// The user `id` names, once the caller is known to be an admin who may change them.
async fn checked(state: &AppState, caller: &Principal, id: &str) -> Result<UserId, ApiError> {
    let tenants = state.store.tenants();
    caller
        .require_admin(&state.store, "deactivate users")
        .await?;
    let user = UserId::from(id);
    if tenants.get_user(&caller.tenant, &user).await?.is_none() {
        return Err(ApiError::Missing(format!("no user {id} in this tenant")));
    }
    if user == caller.actor.user_id {
        return Err(ApiError::Forbidden(
            "an admin cannot deactivate themselves; another admin must".into(),
        ));
    }
    Ok(user)
}

/// `active` from `{"active": b}` or a SCIM PatchOp.
fn active_of(body: &Value) -> Option<bool> {
    if let Some(active) = body.get("active").and_then(Value::as_bool) {
        return Some(active);
    }
    body.get("Operations")?.as_array()?.iter().find_map(|op| {
        let replace = op
            .get("op")
            .and_then(Value::as_str)
            .is_some_and(|o| o.eq_ignore_ascii_case("replace"));
        if !replace {
            return None;
        }
        match op.get("path").and_then(Value::as_str) {
            Some(path) if path.eq_ignore_ascii_case("active") => op.get("value")?.as_bool(),
            Some(_) => None,
            None => op.get("value")?.get("active")?.as_bool(),
        }
    })
}

fn summary(user: &UserId, done: &Offboarded) -> Value {
    json!({
        "user_id": user,
        "active": false,
        "already_deactivated": done.already,
        "automations_paused": done.automations_paused,
        "rules_revoked": done.rules_revoked,
        "sessions_cleared": done.sessions_cleared,
        "wakes_cancelled": done.wakes_cancelled,
        "items_dismissed": done.items_dismissed.len(),
        "credentials_revoked": done.credentials_revoked,
    })
}

#[cfg(test)]
mod tests {
    use super::active_of;
    use serde_json::json;

    #[test]
    fn active_is_read_from_plain_and_scim_bodies() {
        assert_eq!(active_of(&json!({"active": false})), Some(false));
        let scim = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            "Operations": [{"op": "Replace", "path": "active", "value": false}]});
        assert_eq!(active_of(&scim), Some(false));
        let value_object = json!({"Operations": [{"op": "replace", "value": {"active": true}}]});
        assert_eq!(active_of(&value_object), Some(true));
        assert_eq!(active_of(&json!({"displayName": "x"})), None);
    }
}
