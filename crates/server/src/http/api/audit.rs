//! `GET /v1/audit`: the tenant's audit trail, for its admins.
//!
//! Invariants: admins only (`403` otherwise), and only their tenant's records; newest first,
//! paged with `before` (the last id of the previous page); every filter narrows; a record shows
//! its place and hashes once sealed (`seq` null until then, within a second).

use axum::Json;
use axum::extract::{Extension, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_store::AuditQuery;

use super::Principal;
use crate::http::{ApiError, AppState};

/// Records per page by default, and at most.
const DEFAULT_LIMIT: u32 = 100;
const MAX_LIMIT: u32 = 1_000;

/// The filters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Filters {
    /// At or after, Unix ms.
    from: Option<i64>,
    /// Before, Unix ms.
    to: Option<i64>,
    stage: Option<String>,
    actor: Option<String>,
    session: Option<String>,
    tool: Option<String>,
    before: Option<String>,
    limit: Option<u32>,
}

/// `GET /v1/audit?stage=&actor=&session=&tool=&from=&to=&before=&limit=` →
/// `{"records": [...], "next_before": id | null}`.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Query(filters): Query<Filters>,
) -> Result<Json<Value>, ApiError> {
    caller
        .require_admin(&state.store, "read its audit trail")
        .await?;
    let limit = filters.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit is 1 to {MAX_LIMIT}, not {limit}"
        )));
    }
    let query = AuditQuery {
        from_ms: filters.from,
        to_ms: filters.to,
        stage: filters.stage,
        actor: filters.actor,
        session_id: filters.session,
        tool: filters.tool,
        before: filters.before,
    };
    let records = state
        .store
        .audit()
        .list(&caller.tenant, &query, limit)
        .await?;
    let next_before = (records.len() == limit as usize)
        .then(|| records.last().map(|r| r.id.clone()))
        .flatten();
    let records: Vec<Value> = records
        .iter()
        .map(|r| crate::audit::record_json(&caller.tenant, r))
        .collect();
    Ok(Json(
        json!({ "records": records, "next_before": next_before }),
    ))
}
