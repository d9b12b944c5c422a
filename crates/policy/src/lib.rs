//! The permission policy: whether a tool call runs, asks a person, or is refused (spec §3). The
//! engine asks it about every call of a turn; the server's `explain` asks it about sample calls,
//! and the chat layer splits command lines with its shell-word reader.
//!
//! Invariants: the decision is a function of the call, the session's context and the tenant's
//! policy (deterministic, never panics); it touches nothing: no store, no network, no writes, no
//! async, and the only thing it reads beyond its arguments is where a path really leads (the
//! symlinks of a path's existing ancestors, `HOME` for `~`), so a symlink cannot make a path
//! outside the session's folders look inside; read-only modes refuse every consequential call
//! without asking; a write outside the session's writable roots is refused without asking in every
//! mode, `auto` included; nothing but an explicit allowlist entry, a grant a person gave, or a
//! standing rule for one exact target lets a consequential call run unasked outside `auto`;
//! choices are offered only where they apply (and session-wide choices for `run_shell` only where
//! the tenant allows them, `shell_standing_choices`); a shell command that names a file outside the
//! session's folders is never read-only; a `web_fetch` asks unless its URL's host is on the
//! tenant's `web_fetch_allow` list.
//!
//! Reading a tenant's stored settings into a [`TenantPolicy`] is the engine's job
//! (`workmate_engine::tenant_settings`), since that is where settings are validated and stored.

mod allowlist;
mod choices;
mod paths;
mod readonly;
mod risk;
mod shell_words;
mod standing;
mod web;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use workmate_protocol::{ApprovalChoice, PermissionMode};
use workmate_tools::{Root, ToolMetadata};

pub use allowlist::{command_allowed, has_shell_operator};
pub use readonly::is_read_only_command;
pub use risk::{RiskClass, RiskOverride, classify};
pub use shell_words::split_words;
pub use standing::{RequestedPermission, grant_entries, standing_target};
pub use web::{host_matches, valid_host_pattern};

/// The tenant's policy: what its admins configured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermissionConfig {
    /// Shell command prefixes that run without asking (shell-word prefixes; empty by default).
    pub allowed_commands: Vec<String>,
    /// Tools that run without asking in `custom` mode.
    pub auto_allow: Vec<String>,
    /// Risk classes assigned to tool names by glob; the most specific pattern wins.
    pub risk_overrides: Vec<RiskOverride>,
}

/// What a person granted for the rest of a session. Survives restarts (stored with the session).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionGrants {
    /// Tools allowed for the session ("always this tool").
    pub tools: BTreeSet<String>,
    /// Exact shell commands allowed for the session ("always this command").
    pub commands: BTreeSet<String>,
    /// Read-only shell commands allowed for the session.
    pub readonly: bool,
}

/// What the engine knows about the session a call comes from.
#[derive(Clone, Debug, Default)]
pub struct PolicyContext {
    /// The session's permission mode.
    pub mode: PermissionMode,
    /// The folders the session may use; writes must land in a writable one.
    pub roots: Vec<Root>,
    /// What people granted for this session.
    pub grants: SessionGrants,
    /// Standing rules of the automation this session runs for: tool → exact targets.
    pub standing_rules: BTreeMap<String, BTreeSet<String>>,
    /// Whether the session runs for an automation (so "always for this automation" can apply).
    pub automation: bool,
}

/// The verdict on one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow {
        /// Which rule allowed it.
        reason: String,
        /// The standing rule that allowed it, as `tool → target`.
        rule: Option<String>,
    },
    /// Ask a person first.
    Ask {
        /// Why asking.
        reason: String,
        /// The answers to offer.
        choices: Vec<ApprovalChoice>,
        /// The target a standing rule could be bound to, when one could.
        standing_target: Option<String>,
        /// Whether the command is read-only (so "read-only commands for this session" applies).
        readonly_ok: bool,
    },
    /// Refuse without asking.
    Deny {
        /// Why.
        reason: String,
    },
}

impl Decision {
    /// `allow`, `ask` or `deny`.
    pub fn verdict(&self) -> &'static str {
        match self {
            Self::Allow { .. } => "allow",
            Self::Ask { .. } => "ask",
            Self::Deny { .. } => "deny",
        }
    }

    /// The rule or reason that decided.
    pub fn reason(&self) -> &str {
        match self {
            Self::Allow { reason, .. } | Self::Ask { reason, .. } | Self::Deny { reason } => reason,
        }
    }

    fn allow(reason: impl Into<String>) -> Self {
        Self::Allow {
            reason: reason.into(),
            rule: None,
        }
    }
}

/// Tenant settings beside `permissions` that decisions depend on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TenantPolicy {
    /// Whether `run_shell` approvals may offer "always this tool" and "read-only commands for
    /// this session" (setting `shell_standing_choices`, default false).
    pub shell_standing_choices: bool,
    /// Hosts `web_fetch` reaches without asking: exact names or `*.suffix` (setting
    /// `web_fetch_allow`, default none).
    pub web_fetch_allow: Vec<String>,
    /// Exec tools whose sandbox may reach the network (setting `network_tools`, default none).
    pub network_tools: Vec<String>,
}

/// Decides about tool calls for one tenant's policy.
#[derive(Clone, Debug, Default)]
pub struct PermissionEngine {
    config: PermissionConfig,
    policy: TenantPolicy,
}

impl PermissionEngine {
    /// An engine for a tenant's policy.
    pub fn new(config: PermissionConfig) -> Self {
        Self {
            config,
            policy: TenantPolicy::default(),
        }
    }

    /// This engine with the tenant's other settings applied.
    pub fn with_policy(mut self, policy: TenantPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The tenant settings beside `permissions` this engine applies.
    pub fn policy(&self) -> &TenantPolicy {
        &self.policy
    }

    /// The policy this engine applies.
    pub fn config(&self) -> &PermissionConfig {
        &self.config
    }

    /// The risk class of a tool under this policy.
    pub fn classify(&self, tool: &str, metadata: Option<&ToolMetadata>) -> RiskClass {
        classify(tool, metadata, &self.config.risk_overrides)
    }

    /// The verdict on calling `tool` with `arguments`, in the exact order of spec §3.3.
    pub fn evaluate(
        &self,
        ctx: &PolicyContext,
        tool: &str,
        arguments: &serde_json::Value,
        metadata: Option<&ToolMetadata>,
    ) -> Decision {
        let connector = metadata.is_some_and(|m| m.category == "connector");
        let risk = self.classify(tool, metadata);
        // An allowed host is a read the tenant vouched for, in every mode.
        if tool == web::WEB_FETCH
            && risk == RiskClass::External
            && let Some(host) = web::fetch_host(arguments)
            && self
                .policy
                .web_fetch_allow
                .iter()
                .any(|p| host_matches(p, &host))
        {
            return Decision::allow(format!("host on web_fetch_allow: {host}"));
        }
        let read_only_mode = matches!(ctx.mode, PermissionMode::Discuss | PermissionMode::Plan);
        if read_only_mode && risk.is_consequential() {
            return Decision::Deny {
                reason: format!("{} mode is read-only", ctx.mode.as_str()),
            };
        }
        if risk == RiskClass::WriteLocal
            && let Some(path) = arguments.get("path").and_then(serde_json::Value::as_str)
            && !paths::inside_writable_root(&ctx.roots, path)
        {
            return Decision::Deny {
                reason: format!("path is not in a writable directory: {path}"),
            };
        }
        if risk == RiskClass::Read {
            return Decision::allow("low risk");
        }
        if ctx.mode == PermissionMode::Auto {
            return Decision::allow("full access");
        }
        let command = arguments
            .get("command")
            .and_then(serde_json::Value::as_str)
            .map(str::trim);
        if risk == RiskClass::Exec
            && let Some(command) = command
        {
            if command_allowed(command, &self.config.allowed_commands) {
                return Decision::allow("command on allowlist");
            }
            if ctx.grants.commands.contains(command) {
                return Decision::allow("command allowed for session");
            }
            if ctx.grants.readonly && is_read_only_command(command, &ctx.roots) {
                return Decision::allow("read-only command (session grant)");
            }
        }
        if ctx.grants.tools.contains(tool) && !connector {
            return Decision::allow("tool allowed for session");
        }
        let target = standing_target(tool, arguments, metadata, risk);
        if let (Some(targets), Some(target)) = (ctx.standing_rules.get(tool), target.as_deref())
            && targets.contains(target)
        {
            let rule = format!("{tool} → {target}");
            return Decision::Allow {
                reason: format!("allowed by standing rule: {rule}"),
                rule: Some(rule),
            };
        }
        if ctx.mode == PermissionMode::Custom && self.config.auto_allow.iter().any(|t| t == tool) {
            return Decision::allow("auto-allowed by config");
        }
        let readonly_ok =
            risk == RiskClass::Exec && command.is_some_and(|c| is_read_only_command(c, &ctx.roots));
        let choices = choices::offered(
            risk,
            connector,
            command,
            readonly_ok,
            ctx.automation && target.is_some(),
            self.policy.shell_standing_choices,
        );
        Decision::Ask {
            reason: "requires approval".into(),
            choices,
            standing_target: target,
            readonly_ok,
        }
    }
}
