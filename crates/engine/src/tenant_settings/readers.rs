//! Reading the settings the engine acts on, each with its default when unset or unreadable.

use serde_json::Value;
use workmate_protocol::PermissionMode;

use super::{kind, show};

/// The modes members may choose when `modes_allowed` is unset (admins may choose any).
pub const DEFAULT_MODES_ALLOWED: [PermissionMode; 3] = [
    PermissionMode::Discuss,
    PermissionMode::Plan,
    PermissionMode::Interactive,
];

/// The modes anyone but an admin may choose: the setting `modes_allowed`, else
/// [`DEFAULT_MODES_ALLOWED`] (also when the stored value is not valid).
pub fn modes_allowed(settings: &Value) -> Vec<PermissionMode> {
    settings
        .get("modes_allowed")
        .and_then(|v| parse_modes(v).ok())
        .unwrap_or_else(|| DEFAULT_MODES_ALLOWED.to_vec())
}

/// Whether the tenant lets people grant `run_shell` for the whole session ("always this tool",
/// "read-only commands for this session"): the setting `shell_standing_choices`, default false.
pub fn shell_standing_choices(settings: &Value) -> bool {
    settings
        .get("shell_standing_choices")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The hosts `web_fetch` may reach without asking: the setting `web_fetch_allow` (exact host
/// names, or `*.suffix` for any subdomain of `suffix`), default none.
pub fn web_fetch_allow(settings: &Value) -> Vec<String> {
    settings
        .get("web_fetch_allow")
        .and_then(|v| parse_hosts(v).ok())
        .unwrap_or_default()
}

/// The exec tools whose sandbox may reach the network (e.g. `["run_shell"]`): the setting
/// `network_tools`, default none.
pub fn network_tools(settings: &Value) -> Vec<String> {
    settings
        .get("network_tools")
        .and_then(|v| parse_tool_names(v).ok())
        .unwrap_or_default()
}

pub(super) fn parse_tool_names(value: &Value) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or_else(|| {
        format!(
            "is a list of tool names such as [\"run_shell\"], not {}",
            kind(value)
        )
    })?;
    let mut names = Vec::new();
    for item in items {
        let name = item.as_str().map(str::trim).unwrap_or_default();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("holds {}, which is not a tool name", show(item)));
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

pub(super) fn parse_modes(value: &Value) -> Result<Vec<PermissionMode>, String> {
    let items = value.as_array().ok_or_else(|| {
        format!(
            "is a list of modes such as [\"discuss\", \"plan\", \"interactive\"], not {}",
            kind(value)
        )
    })?;
    let mut modes = Vec::new();
    for item in items {
        let mode = item
            .as_str()
            .map(|s| Value::from(s.trim().to_ascii_lowercase()))
            .and_then(|s| serde_json::from_value::<PermissionMode>(s).ok())
            .ok_or_else(|| {
                format!(
                    "lists modes: discuss, plan, interactive, auto or custom, not {}",
                    show(item)
                )
            })?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    Ok(modes)
}

pub(super) fn parse_hosts(value: &Value) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or_else(|| {
        format!(
            "is a list of hosts such as [\"docs.rs\", \"*.example.com\"], not {}",
            kind(value)
        )
    })?;
    items
        .iter()
        .map(|item| {
            let host = item.as_str().map(|s| s.trim().to_ascii_lowercase());
            match host {
                Some(host) if crate::permissions::valid_host_pattern(&host) => Ok(host),
                _ => Err(format!(
                    "lists host names (\"docs.rs\") or \"*.\" and a domain (\"*.example.com\"), \
                     not {}",
                    show(item)
                )),
            }
        })
        .collect()
}
