//! Standing rules (spec §3.6): an automation may run one external tool against one exact target
//! without asking each time.
//!
//! Invariants: a rule names a tool and one exact target; only external tools that declare a
//! target argument are eligible, never shell or local writes; minting keeps only valid entries.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use workmate_tools::ToolMetadata;

use super::RiskClass;

/// The target a standing rule for this call would be bound to, if the call is eligible.
pub fn standing_target(
    tool: &str,
    arguments: &serde_json::Value,
    metadata: Option<&ToolMetadata>,
    risk: RiskClass,
) -> Option<String> {
    if risk != RiskClass::External {
        return None;
    }
    let arg = match metadata.and_then(|m| m.target_arg.as_deref()) {
        Some(arg) => arg,
        None if tool == "send_message" => "target",
        None => return None,
    };
    let target = arguments.get(arg)?.as_str()?.trim();
    (!target.is_empty()).then(|| target.to_owned())
}

/// A permission an automation asks for when it is created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedPermission {
    /// The tool.
    pub tool: String,
    /// The exact target.
    pub target: String,
    /// `read` (disclosure only) or `write` (becomes a rule).
    pub access: String,
}

/// The rule entries (`"<tool> <target>"`) to store for requested permissions: only `write`
/// access, only tools that declare a target argument, only non-blank targets, without duplicates.
pub fn grant_entries(
    requested: &[RequestedPermission],
    metadata_of: impl Fn(&str) -> Option<ToolMetadata>,
) -> Vec<String> {
    let mut seen = BTreeSet::new();
    requested
        .iter()
        .filter(|p| p.access == "write")
        .filter(|p| !p.tool.trim().is_empty() && !p.tool.contains(char::is_whitespace))
        .filter(|p| {
            p.tool == "send_message" || metadata_of(&p.tool).is_some_and(|m| m.target_arg.is_some())
        })
        .filter_map(|p| {
            let target = p.target.trim();
            (!target.is_empty()).then(|| format!("{} {target}", p.tool))
        })
        .filter(|entry| seen.insert(entry.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn external(target_arg: &str) -> ToolMetadata {
        ToolMetadata {
            category: "connector".into(),
            ..ToolMetadata::high("connector", target_arg)
        }
    }

    #[test]
    fn only_external_tools_with_a_present_target_are_eligible() {
        let args = serde_json::json!({"to": " team@example.com ", "command": "ls"});
        let meta = external("to");
        assert_eq!(
            standing_target("email_send", &args, Some(&meta), RiskClass::External).as_deref(),
            Some("team@example.com")
        );
        assert_eq!(
            standing_target("email_send", &args, Some(&meta), RiskClass::Exec),
            None
        );
        assert_eq!(
            standing_target("write_file", &args, Some(&meta), RiskClass::WriteLocal),
            None
        );
        assert_eq!(
            standing_target(
                "email_send",
                &serde_json::json!({"to": "  "}),
                Some(&meta),
                RiskClass::External
            ),
            None
        );
        let send = serde_json::json!({"target": "slack:C01"});
        assert_eq!(
            standing_target("send_message", &send, None, RiskClass::External).as_deref(),
            Some("slack:C01")
        );
    }

    #[test]
    fn minting_keeps_only_valid_write_entries() {
        let ask = |tool: &str, target: &str, access: &str| RequestedPermission {
            tool: tool.into(),
            target: target.into(),
            access: access.into(),
        };
        let requested = [
            ask("email_send", "a@example.com", "write"),
            ask("email_send", "a@example.com", "write"),
            ask("email_send", "b@example.com", "read"),
            ask("email_send", "   ", "write"),
            ask("web_fetch", "https://x", "write"),
            ask("send_message", "slack:C01", "write"),
        ];
        let meta = |tool: &str| (tool == "email_send").then(|| external("to"));
        assert_eq!(
            grant_entries(&requested, meta),
            vec!["email_send a@example.com", "send_message slack:C01"]
        );
    }
}
