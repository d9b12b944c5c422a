//! The inbox: listing parked prompts and answering them.

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_protocol::{InboxItemId, Resolution, SessionId, Surface, Visibility};
use workmate_store::{InboxFilter, InboxItemState};

use super::Principal;
use super::dto::inbox_item;
use super::sessions::resolved;
use super::visible;
use crate::http::{ApiError, AppState};

/// `GET /v1/inbox` filters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    state: Option<InboxItemState>,
    session: Option<String>,
    visibility: Option<Visibility>,
    limit: Option<u32>,
}

/// `GET /v1/inbox?state=pending&session=…&visibility=inbox&limit=100`, oldest first; only the
/// items of sessions the caller may see.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let store = &state.store;
    let sight = visible::sight(store, &caller).await?;
    let filter = InboxFilter {
        session: query.session.map(SessionId::from),
        state: query.state,
        visibility: query.visibility,
        owner: sight.owner().cloned(),
    };
    let limit = query.limit.unwrap_or(100).clamp(1, 1000);
    let items = store.inbox().list(&caller.tenant, &filter, limit).await?;
    Ok(Json(
        json!({ "items": items.iter().map(inbox_item).collect::<Vec<_>>() }),
    ))
}

/// `POST /v1/inbox/{item_id}/resolve` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResolveBody {
    resolution: Resolution,
}

/// `POST /v1/inbox/{item_id}/resolve` → the item; 409 with the winner if already resolved; 404
/// when the caller may not see it.
pub(crate) async fn resolve(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(item): Path<String>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let body: ResolveBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "invalid resolve body: {e}; e.g. {{\"resolution\": {{\"type\": \"approval\", \"choice\": \"once\"}}}}"
        ))
    })?;
    let item = InboxItemId::from(item);
    visible::inbox_item(&state.store, &caller, &item).await?;
    let outcome = state
        .hub
        .resolve(
            &caller.tenant,
            &item,
            &body.resolution,
            &caller.actor,
            Surface::Http,
        )
        .await?;
    resolved(outcome)
}
