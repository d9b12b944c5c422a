//! The connector contract: what a connector says about itself. The engine decides from it, never
//! from a connector's code: a tool's risk comes only from its annotation, and one without an
//! annotation is a high-risk call that asks.

use serde::Serialize;
use serde_json::Value;
use workmate_tools::{RiskLevel, ToolMetadata};

/// The tool category of every connector tool (the permission engine never lets a person
/// "always allow" one for a session: only a standing rule for an exact target does).
pub const CATEGORY: &str = "connector";

/// How a connector authenticates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthKind {
    /// A personal access token (sent as a bearer token).
    Token,
    /// An account e-mail and an API token (HTTP basic).
    ApiToken,
    /// An OAuth access token obtained through the identity layer.
    Oauth,
}

/// A credential field the connect form asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The key in the stored credentials.
    pub key: &'static str,
    /// The label shown.
    pub label: &'static str,
    /// Whether it is a secret (never shown back).
    pub secret: bool,
    /// Whether it must be given.
    pub required: bool,
    /// A hint under the field.
    pub help: &'static str,
}

/// What a tool may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads only: runs without asking.
    Read,
    /// Changes something in the other system: asks, unless a standing rule names its target.
    Write,
}

/// One tool of a connector.
#[derive(Clone, Debug, Serialize)]
pub struct ToolDef {
    /// The tool's name (`github_create_issue`), unique across connectors.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// Its risk annotation; `None` counts as high risk.
    pub risk: Option<Risk>,
    /// The argument naming what a write acts on (`repo`, `project`), for standing rules.
    pub target_arg: Option<&'static str>,
    /// Its arguments' JSON schema.
    #[serde(skip)]
    pub parameters: Value,
}

impl ToolDef {
    /// The metadata the permission engine decides from: a read is low risk and never asks; a
    /// write, or a tool without an annotation, is high risk and asks.
    pub fn metadata(&self) -> ToolMetadata {
        match self.risk {
            Some(Risk::Read) => ToolMetadata::read(CATEGORY),
            Some(Risk::Write) | None => ToolMetadata {
                risk_level: RiskLevel::High,
                requires_approval: true,
                category: CATEGORY.to_owned(),
                target_arg: self.target_arg.map(str::to_owned),
                idempotent: false,
            },
        }
    }
}

/// A connector's description.
#[derive(Clone, Debug, Serialize)]
pub struct Descriptor {
    /// Its id (`github`), also its persona grant name and its vault secret's last segment.
    pub name: &'static str,
    /// Its display name.
    pub title: &'static str,
    /// How it authenticates.
    pub auth: AuthKind,
    /// What the connect form asks for.
    pub fields: Vec<Field>,
    /// Its tools.
    pub tools: Vec<ToolDef>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(risk: Option<Risk>) -> ToolDef {
        ToolDef {
            name: "x_tool",
            description: "",
            risk,
            target_arg: Some("repo"),
            parameters: Value::Null,
        }
    }

    #[test]
    fn reads_run_writes_ask_and_unannotated_tools_are_high_risk() {
        assert!(!tool(Some(Risk::Read)).metadata().requires_approval);
        let write = tool(Some(Risk::Write)).metadata();
        assert!(write.requires_approval && write.target_arg.as_deref() == Some("repo"));
        let unannotated = tool(None).metadata();
        assert!(unannotated.requires_approval);
        assert_eq!(unannotated.risk_level, RiskLevel::High);
    }
}
