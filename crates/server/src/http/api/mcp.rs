//! The tenant's MCP servers over HTTP: `GET /v1/mcp/servers`, `PUT` and `DELETE
//! /v1/mcp/servers/{name}`, `GET /v1/mcp/servers/{name}/tools`.
//!
//! Invariants: anyone in the tenant may list servers and tools, but only admins see a definition's
//! environment and headers (as names and `***`, never values) and what a server wrote to stderr;
//! registering and removing are for tenant admins, and are audited with the change, in one
//! transaction; a definition is checked whole before it is stored.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_mcp::{McpManager, ServerDef};

use super::Principal;
use crate::http::{ApiError, AppState};

fn manager(state: &AppState) -> Result<&std::sync::Arc<McpManager>, ApiError> {
    state.chat.mcp().ok_or_else(|| ApiError::NotReady {
        reason: "MCP servers are not available on this workmate".into(),
    })
}

/// `GET /v1/mcp/servers` → `{servers: [{name, definition, state, updated_by}]}`.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
) -> Result<Json<Value>, ApiError> {
    let mut servers = manager(&state)?.list(&caller.tenant).await?;
    if !caller.is_admin(&state.store).await? {
        servers = servers.into_iter().map(|s| s.for_members()).collect();
    }
    Ok(Json(json!({ "servers": servers })))
}

/// `PUT /v1/mcp/servers/{name}` with the definition (a bare entry, or `{"mcpServers": {name:
/// {...}}}`) → `201` when new, `200` when replaced, `{server: name}`.
pub(crate) async fn put(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller
        .require_admin(&state.store, "register MCP servers")
        .await?;
    let json: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "send the server's definition as JSON, e.g. {{\"url\": \"https://…/mcp\"}} or \
             {{\"command\": \"node\", \"args\": [\"server.js\"]}}: {e}"
        ))
    })?;
    let (named, def) = ServerDef::parse(&json)?;
    if let Some(named) = named.filter(|n| *n != name) {
        return Err(ApiError::Unprocessable(format!(
            "the body's mcpServers entry is named {named}, the path {name}"
        )));
    }
    let created = manager(&state)?
        .add(&caller.tenant, &name, &def, caller.actor.user_id.as_str())
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({ "server": name, "created": created }))))
}

/// `DELETE /v1/mcp/servers/{name}` → `204`, or `404` when none is registered.
pub(crate) async fn remove(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    caller
        .require_admin(&state.store, "remove MCP servers")
        .await?;
    if manager(&state)?
        .remove(&caller.tenant, &name, caller.actor.user_id.as_str())
        .await?
    {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::Missing(format!(
            "no MCP server named {name} is registered"
        )))
    }
}

/// `GET /v1/mcp/servers/{name}/tools` → `{tools: [{name, remote, description, read_only,
/// offered}]}`, starting the server if needed (`503` when it cannot start, with why).
pub(crate) async fn tools(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let tools = manager(&state)?
        .server_tools(&caller.tenant, &name, &caller.actor.user_id)
        .await?;
    Ok(Json(json!({ "tools": tools })))
}
