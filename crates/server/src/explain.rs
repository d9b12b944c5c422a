//! `workmate policy explain`: the permission engine's verdict on one call, and why.
//!
//! Invariant: the verdict is computed by the same `PermissionEngine::evaluate` the turn engine
//! uses, on the same built-in tool metadata; this command only builds its inputs from flags and
//! prints. The first line is exactly `allow`, `ask` or `deny`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};
use workmate_engine::permissions::{
    Decision, PermissionConfig, PermissionEngine, PolicyContext, RiskClass, RiskOverride,
    SessionGrants, TenantPolicy,
};
use workmate_protocol::PermissionMode;
use workmate_tools::{BuiltinOptions, Root, ToolMetadata, builtin_registry};

/// Flags of `workmate policy explain`.
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct ExplainArgs {
    /// The session's mode: discuss, plan, interactive, auto or custom.
    #[arg(long, default_value = "interactive", value_parser = parse_mode)]
    pub mode: PermissionMode,
    /// A shell allowlist entry (repeatable), e.g. --allow "git status".
    #[arg(long = "allow", value_name = "PREFIX")]
    pub allow: Vec<String>,
    /// A writable root (repeatable); the first resolves relative paths. Default: the current
    /// directory.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// A tool allowed for the session ("always this tool"; repeatable).
    #[arg(long = "grant-tool", value_name = "TOOL")]
    pub grant_tools: Vec<String>,
    /// An exact command allowed for the session ("always this command"; repeatable).
    #[arg(long = "grant-command", value_name = "COMMAND")]
    pub grant_commands: Vec<String>,
    /// Read-only shell commands are allowed for the session.
    #[arg(long)]
    pub readonly_session: bool,
    /// A standing rule TOOL=TARGET of the session's automation (repeatable).
    #[arg(long = "rule", value_name = "TOOL=TARGET")]
    pub rules: Vec<String>,
    /// The session runs for an automation.
    #[arg(long)]
    pub automation: bool,
    /// A tool allowed unasked in custom mode (repeatable).
    #[arg(long = "auto-allow", value_name = "TOOL")]
    pub auto_allow: Vec<String>,
    /// A tenant risk override PATTERN=RISK, e.g. 'mcp__*=read' (repeatable).
    #[arg(long = "risk-override", value_name = "PATTERN=RISK")]
    pub risk_overrides: Vec<String>,
    /// The tenant lets run_shell approvals offer session-wide choices (`shell_standing_choices`).
    #[arg(long)]
    pub shell_standing_choices: bool,
    /// A host web_fetch reaches unasked, exact or `*.suffix` (`web_fetch_allow`; repeatable).
    #[arg(long = "web-fetch-allow", value_name = "HOST")]
    pub web_fetch_allow: Vec<String>,
    /// The tool's metadata as JSON, for tools that are not built in.
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
    /// Print one JSON object instead of lines.
    #[arg(long)]
    pub json: bool,
    /// The tool, e.g. run_shell or write_file.
    pub tool: String,
    /// The call's arguments as a JSON object.
    pub arguments: Option<String>,
    /// For run_shell: the command, after `--`.
    #[arg(last = true)]
    pub command: Vec<String>,
}

fn parse_mode(text: &str) -> Result<PermissionMode, String> {
    serde_json::from_value(Value::String(text.to_owned()))
        .map_err(|_| "expected discuss, plan, interactive, auto or custom".to_owned())
}

/// Runs the command; the text to print, or a one-line error.
pub fn explain(args: &ExplainArgs) -> Result<String, String> {
    let arguments = match (&args.arguments, args.command.is_empty()) {
        (Some(_), false) => {
            return Err("give the arguments as JSON or the command after --, not both".into());
        }
        (Some(text), true) => {
            let value: Value =
                serde_json::from_str(text).map_err(|e| format!("ARGS_JSON is not JSON: {e}"))?;
            if !value.is_object() {
                return Err(
                    "ARGS_JSON must be a JSON object, e.g. '{\"path\": \"notes.md\"}'".into(),
                );
            }
            value
        }
        (None, false) => json!({ "command": args.command.join(" ") }),
        (None, true) => json!({}),
    };
    let metadata = match &args.metadata {
        Some(text) => Some(
            serde_json::from_str::<ToolMetadata>(text)
                .map_err(|e| format!("--metadata is not tool metadata: {e}"))?,
        ),
        None => builtin_registry(&BuiltinOptions::default()).metadata(&args.tool),
    };
    let engine = PermissionEngine::new(PermissionConfig {
        allowed_commands: args.allow.clone(),
        auto_allow: args.auto_allow.clone(),
        risk_overrides: args
            .risk_overrides
            .iter()
            .map(|o| parse_override(o))
            .collect::<Result<_, _>>()?,
    })
    .with_policy(TenantPolicy {
        shell_standing_choices: args.shell_standing_choices,
        web_fetch_allow: args.web_fetch_allow.clone(),
        network_tools: Vec::new(),
    });
    let context = PolicyContext {
        mode: args.mode,
        roots: roots(&args.roots)?,
        grants: SessionGrants {
            tools: args.grant_tools.iter().cloned().collect(),
            commands: args
                .grant_commands
                .iter()
                .map(|c| c.trim().to_owned())
                .collect(),
            readonly: args.readonly_session,
        },
        standing_rules: rules(&args.rules)?,
        automation: args.automation,
    };
    let decision = engine.evaluate(&context, &args.tool, &arguments, metadata.as_ref());
    let risk = engine.classify(&args.tool, metadata.as_ref());
    Ok(render(&decision, risk, args.json))
}

fn render(decision: &Decision, risk: RiskClass, as_json: bool) -> String {
    let (choices, target, readonly_ok, standing_rule) = match decision {
        Decision::Ask {
            choices,
            standing_target,
            readonly_ok,
            ..
        } => (
            choices.iter().map(|c| c.as_str()).collect(),
            standing_target.clone(),
            *readonly_ok,
            None,
        ),
        Decision::Allow { rule, .. } => (Vec::new(), None, false, rule.clone()),
        Decision::Deny { .. } => (Vec::new(), None, false, None),
    };
    if as_json {
        let object = json!({
            "decision": decision.verdict(),
            "rule": decision.reason(),
            "risk": risk.as_str(),
            "choices": choices,
            "standing_target": target,
            "standing_rule": standing_rule,
            "readonly_ok": readonly_ok,
        });
        return format!("{object}\n");
    }
    let mut out = format!(
        "{}\nrule: {}\nrisk: {}\n",
        decision.verdict(),
        decision.reason(),
        risk.as_str()
    );
    if !choices.is_empty() {
        out.push_str(&format!("choices: {}\n", choices.join(", ")));
    }
    if let Some(target) = target {
        out.push_str(&format!("standing target: {target}\n"));
    }
    out
}

fn roots(dirs: &[PathBuf]) -> Result<Vec<Root>, String> {
    let dirs = if dirs.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        dirs.to_vec()
    };
    dirs.iter()
        .map(|dir| {
            let path = dir
                .canonicalize()
                .map_err(|e| format!("--root {}: {e}", dir.display()))?;
            Ok(Root {
                path,
                writable: true,
            })
        })
        .collect()
}

fn rules(entries: &[String]) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut rules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in entries {
        let (tool, target) = entry
            .split_once('=')
            .ok_or_else(|| format!("--rule {entry:?}: expected TOOL=TARGET"))?;
        rules
            .entry(tool.to_owned())
            .or_default()
            .insert(target.to_owned());
    }
    Ok(rules)
}

fn parse_override(entry: &str) -> Result<RiskOverride, String> {
    let (pattern, risk) = entry
        .rsplit_once('=')
        .ok_or_else(|| format!("--risk-override {entry:?}: expected PATTERN=RISK"))?;
    let risk = serde_json::from_value(Value::String(risk.to_owned())).map_err(|_| {
        format!("--risk-override {entry:?}: risk is read, write_local, exec or external")
    })?;
    Ok(RiskOverride {
        pattern: pattern.to_owned(),
        risk,
    })
}
