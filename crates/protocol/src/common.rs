//! Small types shared by events, commands and messages.
//!
//! Plain-string enums here (`PermissionMode`, `ApprovalChoice`, and [`crate::Surface`]) serialize as bare
//! snake_case strings, never as tagged objects, so they read the same in JSON, in a database column
//! and in a card button's value. Their `as_str` always equals their serde form.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ToolCallId, UserId};

/// Who did something: a person of the tenant, with the display name known at the time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Actor {
    /// The tenant user.
    pub user_id: UserId,
    /// The display name at the time of the action, when the surface told us one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Actor {
    /// An actor known only by id.
    pub fn new(user_id: impl Into<UserId>) -> Self {
        Self {
            user_id: user_id.into(),
            name: None,
        }
    }

    /// An actor with a display name.
    pub fn named(user_id: impl Into<UserId>, name: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            name: Some(name.into()),
        }
    }
}

/// A session's permission mode: how much the agent may do without asking.
///
/// `discuss` and `plan` share read-only enforcement; they differ only in the per-turn reminder and
/// in whether `propose_plan` is meaningful. The mode is a ceiling that unattended operation never
/// raises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PermissionMode {
    /// Talk only: read-only tools, no changes.
    Discuss,
    /// Read-only investigation ending in a plan the user approves (`propose_plan`).
    Plan,
    /// Risky tools ask for approval (the default).
    #[default]
    Interactive,
    /// Act without asking, except where a rule still demands approval.
    Auto,
    /// Per-tool overrides decide.
    Custom,
}

impl PermissionMode {
    /// The wire name, e.g. `"interactive"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Discuss => "discuss",
            Self::Plan => "plan",
            Self::Interactive => "interactive",
            Self::Auto => "auto",
            Self::Custom => "custom",
        }
    }
}

/// An answer to a permission prompt; also the set of buttons a prompt offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalChoice {
    /// Allow this one call.
    Once,
    /// Allow this tool for the rest of the session.
    AlwaysTool,
    /// Allow this exact shell command for the rest of the session.
    AlwaysCommand,
    /// Allow every command the read-only classifier accepts, for the rest of the session.
    ReadonlySession,
    /// Allow this tool on this target for every run of the automation (a standing rule); the
    /// current call is approved once.
    AlwaysTask,
    /// Refuse the call.
    Deny,
}

impl ApprovalChoice {
    /// The wire name, e.g. `"always_tool"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::AlwaysTool => "always_tool",
            Self::AlwaysCommand => "always_command",
            Self::ReadonlySession => "readonly_session",
            Self::AlwaysTask => "always_task",
            Self::Deny => "deny",
        }
    }

    /// Whether the call goes ahead (everything except `deny`).
    pub fn allows(self) -> bool {
        !matches!(self, Self::Deny)
    }
}

/// Tokens spent by one model round-trip.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenUsage {
    /// The routed model id that answered, e.g. `"openai:gpt-5-mini"`.
    pub model: String,
    /// Prompt tokens not served from or written to the cache (the full prompt is
    /// `input + cache_read + cache_write`).
    pub input: u64,
    /// Completion tokens, including reasoning.
    pub output: u64,
    /// Prompt tokens served from the provider's cache.
    pub cache_read: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write: u64,
}

/// A tool call requested by the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// The provider's call id, kept verbatim.
    pub id: ToolCallId,
    /// The tool name.
    pub name: String,
    /// The parsed arguments object. Model output that is not a JSON object is kept as
    /// `{"_raw": "<text>"}`; such a call is never executed.
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// The key that holds unparseable argument text.
    pub const RAW_KEY: &'static str = "_raw";

    /// Parses a model's argument text: a JSON object is kept, blank text is `{}`, anything else
    /// becomes `{"_raw": text}`.
    pub fn parse_arguments(text: &str) -> serde_json::Value {
        if text.trim().is_empty() {
            return serde_json::Value::Object(serde_json::Map::new());
        }
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(value @ serde_json::Value::Object(_)) => value,
            _ => serde_json::json!({ Self::RAW_KEY: text }),
        }
    }

    /// The unparsed argument text, when the model's output was not a JSON object.
    pub fn raw_arguments(&self) -> Option<&str> {
        self.arguments.get(Self::RAW_KEY)?.as_str()
    }
}

/// A tool as offered to a model: its name, what it does, and the JSON Schema of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// The JSON Schema of its arguments object.
    pub parameters: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_enums_serialize_as_their_names() {
        for m in [
            PermissionMode::Discuss,
            PermissionMode::Auto,
            PermissionMode::Custom,
        ] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
        }
        for c in [ApprovalChoice::AlwaysTool, ApprovalChoice::ReadonlySession] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert_eq!(PermissionMode::default(), PermissionMode::Interactive);
        assert!(!ApprovalChoice::Deny.allows());
        assert!(ApprovalChoice::AlwaysTask.allows());
    }

    #[test]
    fn tool_arguments_keep_unparseable_text() {
        let ok = ToolCall::parse_arguments(r#"{"path": "a.txt"}"#);
        assert_eq!(ok, serde_json::json!({"path": "a.txt"}));
        assert_eq!(ToolCall::parse_arguments("  "), serde_json::json!({}));
        let bad = ToolCall::parse_arguments(r#"{"path": "a.t"#);
        assert_eq!(bad, serde_json::json!({"_raw": r#"{"path": "a.t"#}));
        assert_eq!(
            ToolCall::parse_arguments("[1]"),
            serde_json::json!({"_raw": "[1]"})
        );
        let call = ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: bad,
        };
        assert_eq!(call.raw_arguments(), Some(r#"{"path": "a.t"#));
    }
}
