//! Personas over HTTP: `GET /v1/personas`, `POST /v1/personas/install` and
//! `POST /v1/personas/{id}` (an admin's consent).
//!
//! Invariants: anyone in the tenant may list; installing and consenting are for tenant admins;
//! an install lands pending and answers with what an admin is asked to consent to; every install
//! and consent is audited by the personas registry.

use std::path::PathBuf;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_personas::{InstallSource, Personas};

use super::Principal;
use crate::http::{ApiError, AppState};

/// `GET /v1/personas` → `{personas: [...]}`: built-ins first, each with its state and what it
/// asks for.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
) -> Result<Json<Value>, ApiError> {
    let entries = Personas::new(state.store.clone())
        .list(&caller.tenant)
        .await?;
    Ok(Json(json!({ "personas": entries })))
}

/// `POST /v1/personas/install` body: exactly one of `path` (a folder on the server) or `git`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InstallBody {
    path: Option<PathBuf>,
    git: Option<String>,
}

/// `POST /v1/personas/install` → `201 {consent: {...}}`.
pub(crate) async fn install(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller
        .require_admin(&state.store, "install personas")
        .await?;
    let body: InstallBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "send {{\"path\": \"<folder>\"}} or {{\"git\": \"<url>\"}}: {e}"
        ))
    })?;
    let source = match (body.path, body.git) {
        (Some(path), None) => InstallSource::Dir(path),
        (None, Some(url)) => InstallSource::Git(url),
        _ => {
            return Err(ApiError::BadRequest(
                "send exactly one of `path` (a folder on the server) or `git` (a repository URL)"
                    .into(),
            ));
        }
    };
    let consent = Personas::new(state.store.clone())
        .with_install_policy(state.personas.as_ref().clone())
        .install(&caller.tenant, &source, &caller.actor.user_id)
        .await?;
    Ok((StatusCode::CREATED, Json(json!({ "consent": consent }))))
}

/// `POST /v1/personas/{id}` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideBody {
    enabled: bool,
}

/// `POST /v1/personas/{id}` with `{"enabled": true}` (consent) or `false` → `{persona: {...}}`.
pub(crate) async fn decide(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    caller
        .require_admin(&state.store, "consent to personas")
        .await?;
    let body: DecideBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "send {{\"enabled\": true}} or {{\"enabled\": false}}: {e}"
        ))
    })?;
    let entry = Personas::new(state.store.clone())
        .set_enabled(&caller.tenant, &id, body.enabled, &caller.actor.user_id)
        .await?;
    Ok(Json(json!({ "persona": entry })))
}
