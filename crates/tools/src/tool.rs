//! The tool contract.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use workmate_protocol::{SessionId, TenantId, ToolSpec, UserId};

use crate::ToolRepos;

/// How much harm a tool can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// Reads or computes; no lasting effect.
    Low,
    /// Changes local state (files in the session's roots).
    Medium,
    /// Runs code or reaches outside.
    High,
}

/// What a tool declares about itself. The permission engine and the scheduler of concurrent calls
/// decide from this.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMetadata {
    /// How much harm it can do.
    pub risk_level: RiskLevel,
    /// Whether a person must approve each call (unless a grant or rule says otherwise).
    pub requires_approval: bool,
    /// A grouping for display and policy: `files`, `shell`, `web`, `memory`, …
    pub category: String,
    /// The argument naming what the call acts on (`path`, `url`, `command`), for standing rules
    /// and approval cards.
    pub target_arg: Option<String>,
    /// Whether running it twice has the same effect as once: only such a tool is re-run when a
    /// restart finds it started but not finished.
    pub idempotent: bool,
}

impl ToolMetadata {
    /// Metadata of a read-only tool: low risk, no approval, safe to repeat.
    pub fn read(category: &str) -> Self {
        Self {
            risk_level: RiskLevel::Low,
            requires_approval: false,
            category: category.to_owned(),
            target_arg: None,
            idempotent: true,
        }
    }

    /// Metadata of a tool that changes local files: medium risk, asks.
    pub fn write_local(category: &str, target_arg: &str) -> Self {
        Self {
            risk_level: RiskLevel::Medium,
            requires_approval: true,
            category: category.to_owned(),
            target_arg: Some(target_arg.to_owned()),
            idempotent: false,
        }
    }

    /// Metadata of a tool that runs code or reaches outside: high risk, asks.
    pub fn high(category: &str, target_arg: &str) -> Self {
        Self {
            risk_level: RiskLevel::High,
            requires_approval: true,
            category: category.to_owned(),
            target_arg: Some(target_arg.to_owned()),
            idempotent: false,
        }
    }

    /// Whether calls of this tool may run at the same time as other such calls.
    pub fn is_concurrency_safe(&self) -> bool {
        self.risk_level == RiskLevel::Low && !self.requires_approval
    }
}

/// A folder a session may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    /// The folder, canonical (absolute, symlinks resolved).
    pub path: PathBuf,
    /// Whether tools may write in it.
    pub writable: bool,
}

/// What a tool call runs with.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The tenant of the session.
    pub tenant_id: TenantId,
    /// The session calling.
    pub session_id: SessionId,
    /// Who the call acts for (the author of the turn's latest message, else the session's
    /// owner).
    pub user_id: UserId,
    /// The session's channel, `<surface>:<chat id>`: where its channel skills are kept.
    pub channel: String,
    /// The session's persona id.
    pub persona: String,
    /// The folders the session may use; the first is the primary one (relative paths resolve
    /// against it).
    pub roots: Vec<Root>,
    /// Cancelled when the user stops the turn: long-running tools must stop promptly.
    pub cancel: CancellationToken,
    /// The repositories of tools that keep state (memory, skills, wakes, automations).
    pub repos: ToolRepos,
    /// Whether exec tools may reach the network from their sandbox (the tenant allows it for this
    /// call). Off, a sandboxed command has only its own loopback.
    pub network: bool,
}

/// A failed tool call: the message the model sees as the call's error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong, for the model and the person reading the card.
    pub message: String,
}

impl ToolError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// A tool's outcome: a JSON result (which may carry a display-only `_display` field) or an error.
pub type ToolResult = Result<serde_json::Value, ToolError>;

/// The future a tool call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// A tool the model can call.
pub trait Tool: Send + Sync + fmt::Debug {
    /// Name, description and argument schema.
    fn spec(&self) -> ToolSpec;

    /// What the tool declares about itself; `None` means high risk, approval required.
    fn metadata(&self) -> Option<ToolMetadata>;

    /// Runs one call. Arguments are the model's JSON object, not yet validated.
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a>;
}
