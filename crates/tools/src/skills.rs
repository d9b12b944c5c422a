//! Skill tools: `load_skill` (progressive disclosure, spec §10.4) and `save_skill`.
//!
//! Invariants: `load_skill` returns only a skill the session can see (its tenant's, its
//! persona's bundle, its channel's), read afresh on every call so a skill saved or removed
//! applies at once; a miss answers with the names that exist. `save_skill` is a write that asks
//! for approval every time, stores into the channel's skill store (or the tenant's), and saving
//! the same name again replaces the skill.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use workmate_protocol::{TenantId, UserId};

use crate::args::simple_tool;
use crate::{RepoError, RepoFuture, RiskLevel, ToolContext, ToolError, ToolMetadata, ToolResult};

/// Where a saved skill is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillScope {
    /// The session's channel only.
    Channel,
    /// Everyone in the tenant.
    Tenant,
}

/// A skill as `load_skill` hands it to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillEntry {
    /// Its name, as the catalog lists it.
    pub name: String,
    /// The procedure.
    pub instructions: String,
    /// Tools the procedure expects to use (advisory).
    pub allowed_tools: Vec<String>,
}

/// A skill to save, not yet validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSkill {
    /// A short name.
    pub name: String,
    /// One line on when it applies.
    pub description: String,
    /// The procedure, in markdown.
    pub instructions: String,
    /// Tools the procedure expects to use (advisory).
    pub allowed_tools: Vec<String>,
}

/// What the skill tools need: the skills a session can see, and a place to save one.
pub trait SkillRepo: Send + Sync + fmt::Debug {
    /// The skills a session of `tenant` with `persona` in `channel` (`<surface>:<chat id>`) can
    /// see, read afresh.
    fn visible<'a>(
        &'a self,
        tenant: &'a TenantId,
        persona: &'a str,
        channel: &'a str,
    ) -> RepoFuture<'a, Vec<SkillEntry>>;

    /// Validates and saves `skill` into `scope`, replacing one of the same name; the name as
    /// saved. A malformed skill is `Invalid`; a save that cannot be made is `Refused`.
    fn save<'a>(
        &'a self,
        tenant: &'a TenantId,
        scope: SkillScope,
        channel: &'a str,
        skill: &'a NewSkill,
        by: &'a UserId,
    ) -> RepoFuture<'a, String>;
}

/// Arguments of `load_skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadSkillArgs {
    /// The skill's name, as the catalog lists it.
    name: String,
}

/// Arguments of `save_skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SaveSkillArgs {
    /// A short name: letters, digits, `.`, `_` or `-` (at most 64).
    name: String,
    /// One line on when the skill applies (all a model sees until it loads the skill).
    description: String,
    /// The procedure, step by step, in markdown.
    instructions: String,
    /// `channel` (this chat only, the default) or `tenant` (everyone in the company).
    #[serde(default = "channel")]
    scope: String,
    /// Tools the procedure expects to use (advisory).
    #[serde(default)]
    allowed_tools: Vec<String>,
}

fn channel() -> String {
    "channel".to_owned()
}

simple_tool!(
    /// `load_skill(name)`.
    LoadSkill,
    "load_skill",
    LoadSkillArgs,
    "Load the full instructions of a skill from the catalog of available skills. Call it before \
     following a skill; follow the instructions it returns.",
    ToolMetadata::read("skills"),
    load
);

simple_tool!(
    /// `save_skill(name, description, instructions, scope="channel")`.
    SaveSkill,
    "save_skill",
    SaveSkillArgs,
    "Save a procedure as a skill, so later conversations can load it: when the user teaches a \
     repeatable way of doing something. Scope `channel` keeps it for this chat, `tenant` for \
     everyone. A person approves every save; saving an existing name replaces it.",
    ToolMetadata {
        risk_level: RiskLevel::Medium,
        requires_approval: true,
        category: "skills".to_owned(),
        target_arg: Some("name".to_owned()),
        idempotent: true,
    },
    save
);

async fn visible(ctx: &ToolContext) -> Result<Vec<SkillEntry>, ToolError> {
    ctx.repos
        .skills
        .visible(&ctx.tenant_id, &ctx.persona, &ctx.channel)
        .await
        .map_err(|e| unavailable(&e))
}

async fn load(ctx: &ToolContext, args: LoadSkillArgs) -> ToolResult {
    let skills = visible(ctx).await?;
    let name = args.name.trim();
    match skills.iter().find(|s| s.name == name) {
        Some(skill) => Ok(json!({
            "name": skill.name,
            "instructions": skill.instructions,
            "allowed_tools": skill.allowed_tools,
        })),
        None => Ok(json!({
            "error": format!("unknown skill: {name}"),
            "available": skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        })),
    }
}

async fn save(ctx: &ToolContext, args: SaveSkillArgs) -> ToolResult {
    let scope = match args.scope.trim() {
        "channel" => SkillScope::Channel,
        "tenant" => SkillScope::Tenant,
        other => {
            return Err(ToolError::new(format!(
                "scope {other:?} is not one of channel, tenant"
            )));
        }
    };
    let skill = NewSkill {
        name: args.name,
        description: args.description,
        instructions: args.instructions,
        allowed_tools: args.allowed_tools,
    };
    let name = ctx
        .repos
        .skills
        .save(&ctx.tenant_id, scope, &ctx.channel, &skill, &ctx.user_id)
        .await
        .map_err(|e| match e {
            RepoError::Invalid(why) => ToolError::new(format!("the skill was not saved: {why}")),
            RepoError::Refused(why) => ToolError::new(why),
            unavailable_error @ RepoError::Unavailable(_) => unavailable(&unavailable_error),
        })?;
    Ok(json!({
        "saved": true,
        "name": name,
        "scope": args.scope.trim(),
    }))
}

fn unavailable(error: &RepoError) -> ToolError {
    tracing::warn!(error = %error, "Skill store call failed.");
    ToolError::new("the skill store is unavailable; try again later")
}
