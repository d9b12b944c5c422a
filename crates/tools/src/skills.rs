//! Skill tools: `load_skill` (progressive disclosure, spec §10.4) and `save_skill`.
//!
//! Invariants: `load_skill` returns only a skill the session can see (its tenant's, its
//! persona's bundle, its channel's), read afresh on every call so a skill saved or removed
//! applies at once; a miss answers with the names that exist. `save_skill` is a write that asks
//! for approval every time, stores into the channel's skill store (or the tenant's), and saving
//! the same name again replaces the skill.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use workmate_personas::{Personas, Skill, SkillScope, Skills};

use crate::args::simple_tool;
use crate::{RiskLevel, ToolContext, ToolError, ToolMetadata, ToolResult};

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

async fn visible(ctx: &ToolContext) -> Result<Vec<Skill>, ToolError> {
    let persona = Personas::new(ctx.store.clone())
        .resolve(&ctx.tenant_id, &ctx.persona)
        .await
        .map_err(|e| unavailable(&e))?;
    Skills::new(ctx.store.clone())
        .visible(&ctx.tenant_id, &persona, &ctx.channel)
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
    let skill = Skill::new(
        &args.name,
        &args.description,
        &args.instructions,
        args.allowed_tools,
    )
    .map_err(|e| ToolError::new(format!("the skill was not saved: {e}")))?;
    Skills::new(ctx.store.clone())
        .save(&ctx.tenant_id, scope, &ctx.channel, &skill, &ctx.user_id)
        .await
        .map_err(|e| match e {
            workmate_personas::Error::Store(e) => unavailable(&workmate_personas::Error::Store(e)),
            other => ToolError::new(other.to_string()),
        })?;
    Ok(json!({
        "saved": true,
        "name": skill.name,
        "scope": args.scope.trim(),
    }))
}

fn unavailable(error: &workmate_personas::Error) -> ToolError {
    tracing::warn!(error = %error, "Skill store call failed.");
    ToolError::new("the skill store is unavailable; try again later")
}
