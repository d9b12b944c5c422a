//! Explicit memory tools: `remember`, `memory_read`, `memory_update`, `memory_forget`.
//!
//! Invariants: memory changes only through these explicit calls (nothing is extracted); every
//! read and write is scoped to the calling session's tenant; and a global memory belongs to one
//! person — another user of the same tenant sees it as missing, so ids cannot be used to read or
//! change a coworker's personal facts. Saving, changing and deleting are writes (the permission
//! engine refuses them in read-only modes); reading is a read.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_protocol::{TenantId, UserId};

use crate::args::simple_tool;
use crate::{RepoError, RepoFuture, ToolContext, ToolError, ToolMetadata, ToolResult};

/// Where a memory applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryScope {
    /// About one person, everywhere (its `owner`).
    Global,
    /// About one project (its `workspace`).
    Workspace,
}

/// A memory to save.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMemory {
    /// Where it applies.
    pub scope: MemoryScope,
    /// The person a global memory belongs to.
    pub owner: Option<UserId>,
    /// The project folder a workspace memory is about.
    pub workspace: Option<String>,
    /// The fact.
    pub content: String,
    /// A one-line summary.
    pub summary: Option<String>,
}

/// A saved memory, as the tools read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRecord {
    /// Its id.
    pub id: String,
    /// Where it applies.
    pub scope: MemoryScope,
    /// The person a global memory belongs to.
    pub owner: Option<UserId>,
    /// The fact.
    pub content: String,
}

/// What the memory tools need: a tenant's memories and whether a person lets them be saved.
pub trait MemoryRepo: Send + Sync + fmt::Debug {
    /// Whether `user` lets memories be saved (the `/workmate memory` switch).
    fn saving_on<'a>(&'a self, tenant: &'a TenantId, user: &'a UserId) -> RepoFuture<'a, bool>;

    /// Saves a memory.
    fn add<'a>(&'a self, tenant: &'a TenantId, new: &'a NewMemory) -> RepoFuture<'a, MemoryRecord>;

    /// The memory `id` of `tenant`, whoever owns it.
    fn get<'a>(&'a self, tenant: &'a TenantId, id: &'a str)
    -> RepoFuture<'a, Option<MemoryRecord>>;

    /// Replaces a memory's text (and summary, when given); `false` if there is none.
    fn update<'a>(
        &'a self,
        tenant: &'a TenantId,
        id: &'a str,
        content: &'a str,
        summary: Option<&'a str>,
    ) -> RepoFuture<'a, bool>;

    /// Deletes a memory; `false` if there is none.
    fn delete<'a>(&'a self, tenant: &'a TenantId, id: &'a str) -> RepoFuture<'a, bool>;
}

const MAX_CONTENT_CHARS: usize = 20_000;

/// Why a memory write was not made for a person who turned saving off.
const SAVING_OFF: &str = "Saving memories is turned off for this person (`/workmate memory on` \
turns it back on); nothing was saved, changed or deleted. Do not ask again in this conversation.";
const MAX_READ_IDS: usize = 100;

/// Arguments of `remember`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RememberArgs {
    /// The fact to remember, self-contained.
    content: String,
    /// A one-line summary, shown when many memories are listed.
    #[serde(default)]
    summary: String,
    /// `workspace` (about this project, the default) or `global` (about the user, everywhere).
    #[serde(default = "workspace")]
    scope: String,
}

fn workspace() -> String {
    "workspace".to_owned()
}

/// Arguments of `memory_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryReadArgs {
    /// The ids of the memories to read in full.
    memory_ids: Vec<String>,
}

/// Arguments of `memory_update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryUpdateArgs {
    /// The memory to change.
    memory_id: String,
    /// Its new full text.
    content: String,
    /// A new one-line summary (empty keeps the current one).
    #[serde(default)]
    summary: String,
}

/// Arguments of `memory_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryForgetArgs {
    /// The memory to delete.
    memory_id: String,
}

simple_tool!(
    /// `remember(content, summary="", scope="workspace")`.
    Remember,
    "remember",
    RememberArgs,
    "Save a durable fact for future sessions: scope `workspace` for facts about this project, \
     `global` for facts about the user. Only save what the user would want remembered; update an \
     existing memory instead of saving a duplicate.",
    memory_write(),
    remember
);

simple_tool!(
    /// `memory_read(memory_ids)`.
    MemoryRead,
    "memory_read",
    MemoryReadArgs,
    "Read the full text of memories by id (use it when only a summary was shown).",
    ToolMetadata::read("memory"),
    read
);

simple_tool!(
    /// `memory_update(memory_id, content, summary="")`.
    MemoryUpdate,
    "memory_update",
    MemoryUpdateArgs,
    "Replace the text of a saved memory (e.g. when a remembered fact changed).",
    memory_write(),
    update
);

simple_tool!(
    /// `memory_forget(memory_id)`.
    MemoryForget,
    "memory_forget",
    MemoryForgetArgs,
    "Delete a saved memory that is wrong or no longer wanted.",
    memory_write(),
    forget
);

/// Metadata of a tool that saves or deletes a memory: a write (what every later session is told
/// changes), so read-only modes refuse it and it never runs concurrently with other calls.
fn memory_write() -> ToolMetadata {
    ToolMetadata {
        risk_level: crate::RiskLevel::Medium,
        requires_approval: true,
        category: "memory".to_owned(),
        target_arg: None,
        idempotent: false,
    }
}

/// `None` when the caller lets memories be saved, else the refusal a write tool answers with
/// (`{"<done>": false, "error": …}`), checked on every call so a switch applies at once.
async fn refused_when_off(ctx: &ToolContext, done: &str) -> Result<Option<Value>, ToolError> {
    let on = ctx
        .repos
        .memory
        .saving_on(&ctx.tenant_id, &ctx.user_id)
        .await
        .map_err(|e| store_error(&e))?;
    Ok((!on).then(|| json!({ done: false, "error": SAVING_OFF })))
}

async fn remember(ctx: &ToolContext, args: RememberArgs) -> ToolResult {
    check_content(&args.content)?;
    if let Some(refused) = refused_when_off(ctx, "saved").await? {
        return Ok(refused);
    }
    // Unknown scopes (and the retired `session` scope) fall back to the workspace.
    let scope = if args.scope.trim() == "global" {
        MemoryScope::Global
    } else {
        MemoryScope::Workspace
    };
    let new = NewMemory {
        scope,
        owner: (scope == MemoryScope::Global).then(|| ctx.user_id.clone()),
        workspace: match scope {
            MemoryScope::Workspace => ctx.roots.first().map(|r| r.path.display().to_string()),
            MemoryScope::Global => None,
        },
        content: args.content,
        summary: non_empty(&args.summary),
    };
    let saved = ctx
        .repos
        .memory
        .add(&ctx.tenant_id, &new)
        .await
        .map_err(|e| store_error(&e))?;
    Ok(json!({"id": saved.id, "scope": scope_name(saved.scope), "saved": true}))
}

async fn read(ctx: &ToolContext, args: MemoryReadArgs) -> ToolResult {
    if args.memory_ids.len() > MAX_READ_IDS {
        return Err(ToolError::new(format!(
            "at most {MAX_READ_IDS} ids per call"
        )));
    }
    let mut memories = Vec::new();
    let mut missing = Vec::new();
    for id in args.memory_ids {
        match visible(ctx, &id).await? {
            Some(m) => memories.push(json!({
                "id": m.id,
                "scope": scope_name(m.scope),
                "content": m.content,
            })),
            None => missing.push(Value::String(id)),
        }
    }
    let mut result = json!({"memories": memories});
    if !missing.is_empty() {
        result["missing"] = Value::Array(missing);
    }
    Ok(result)
}

async fn update(ctx: &ToolContext, args: MemoryUpdateArgs) -> ToolResult {
    check_content(&args.content)?;
    if let Some(refused) = refused_when_off(ctx, "updated").await? {
        return Ok(refused);
    }
    let Some(memory) = visible(ctx, &args.memory_id).await? else {
        return Err(ToolError::new(format!(
            "no memory with id '{}'",
            args.memory_id
        )));
    };
    let summary = non_empty(&args.summary);
    let updated = ctx
        .repos
        .memory
        .update(
            &ctx.tenant_id,
            &memory.id,
            &args.content,
            summary.as_deref(),
        )
        .await
        .map_err(|e| store_error(&e))?;
    if !updated {
        return Err(ToolError::new(format!(
            "no memory with id '{}'",
            args.memory_id
        )));
    }
    Ok(json!({"updated": true, "id": memory.id}))
}

async fn forget(ctx: &ToolContext, args: MemoryForgetArgs) -> ToolResult {
    if let Some(refused) = refused_when_off(ctx, "deleted").await? {
        return Ok(refused);
    }
    let deleted = match visible(ctx, &args.memory_id).await? {
        Some(memory) => ctx
            .repos
            .memory
            .delete(&ctx.tenant_id, &memory.id)
            .await
            .map_err(|e| store_error(&e))?,
        None => false,
    };
    Ok(json!({"deleted": deleted, "id": args.memory_id}))
}

/// The memory, if it exists in the tenant and the caller may see it.
async fn visible(ctx: &ToolContext, id: &str) -> Result<Option<MemoryRecord>, ToolError> {
    let memory = ctx
        .repos
        .memory
        .get(&ctx.tenant_id, id)
        .await
        .map_err(|e| store_error(&e))?;
    Ok(memory.filter(|m| match m.scope {
        MemoryScope::Global => m.owner.as_ref().is_none_or(|owner| *owner == ctx.user_id),
        MemoryScope::Workspace => true,
    }))
}

fn check_content(content: &str) -> Result<(), ToolError> {
    if content.trim().is_empty() {
        return Err(ToolError::new("content must not be empty"));
    }
    if content.chars().count() > MAX_CONTENT_CHARS {
        return Err(ToolError::new(format!(
            "content is too long (at most {MAX_CONTENT_CHARS} characters); save a shorter fact"
        )));
    }
    Ok(())
}

fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn scope_name(scope: MemoryScope) -> &'static str {
    match scope {
        MemoryScope::Global => "global",
        MemoryScope::Workspace => "workspace",
    }
}

fn store_error(error: &RepoError) -> ToolError {
    tracing::warn!(error = %error, "Memory store call failed.");
    ToolError::new("the memory store is unavailable; try again later")
}
