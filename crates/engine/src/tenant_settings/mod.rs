//! Tenant-wide settings (the `settings` object of a tenant's row): validating an admin's change,
//! storing it, and showing the settings with their defaults.
//!
//! Invariants: a known key is stored only with a value its reader accepts (the automation
//! service's zone parser for `timezone`, the engine's own [`PermissionConfig`] parser for
//! `permissions`), so a setting an admin was told is set is never silently ignored later; an
//! unknown key is refused, never stored; a change touches only the keys it names (other keys in
//! the object, unknown ones included, are kept); a change of several keys is validated whole
//! before anything is written, then written once and audited once (`tenant_settings_changed`).
//! Who may change settings (a tenant admin) is checked by the callers, the HTTP route and the chat
//! command, before they call [`update`].

mod readers;

use crate::permissions::PermissionConfig;
use serde_json::{Map, Value, json};
use tracing::info;
use workmate_protocol::{TenantId, UserId};
use workmate_store::{NewAuditRecord, Store};
use workmate_tools::automations::zone;

pub use readers::{
    DEFAULT_MODES_ALLOWED, modes_allowed, network_tools, shell_standing_choices, web_fetch_allow,
};
use readers::{parse_hosts, parse_modes, parse_tool_names};

/// The settings an admin may change, in the order they are shown.
pub const KNOWN: [&str; 16] = [
    "timezone",
    "automation_creators",
    "separation_of_duties",
    "modes_allowed",
    "permissions",
    "shell_standing_choices",
    "web_fetch_allow",
    "network_tools",
    "gateway",
    "approver_groups",
    "approval_quorum",
    "approvals",
    "identity_binding",
    "auth_groups",
    "dlp",
    "compaction",
];

/// The audit stage of a settings change.
pub const AUDIT_STAGE: &str = "tenant_settings_changed";

/// Why a settings change was not made.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// No such setting.
    #[error("unknown setting `{key}`; the settings are {}", KNOWN.join(", "))]
    Unknown {
        /// The key as given.
        key: String,
    },
    /// The value is not one the setting takes; the reason says what it takes.
    #[error("`{key}` {reason}")]
    Invalid {
        /// The setting.
        key: &'static str,
        /// What is wrong and what it takes.
        reason: String,
    },
    /// The change names no setting.
    #[error("no setting given; the settings are {}", KNOWN.join(", "))]
    Empty,
    /// The store failed (only from [`update`]).
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
}

/// `current` with `key` set to `value`, or removed (back to its default) when `value` is JSON
/// null. A value is normalised where its reader is strict: a zone to its canonical IANA name,
/// `automation_creators` to lower case.
pub fn apply(current: &Value, key: &str, value: &Value) -> Result<Value, SettingError> {
    let key = known(key)?;
    let mut settings = match current {
        Value::Object(map) => map.clone(),
        // A tenant row always holds an object; anything else has nothing worth keeping.
        _ => Map::new(),
    };
    if value.is_null() {
        settings.remove(key);
    } else {
        let checked = validated(key, value, &settings)?;
        settings.insert(key.to_owned(), checked);
    }
    Ok(Value::Object(settings))
}

/// `current` with every change in `changes` applied, or the first error (nothing applied).
pub fn apply_all(current: &Value, changes: &Map<String, Value>) -> Result<Value, SettingError> {
    if changes.is_empty() {
        return Err(SettingError::Empty);
    }
    // Groups first: a quorum rule may name a group the same change defines.
    let mut ordered: Vec<(&String, &Value)> = changes.iter().collect();
    ordered.sort_by_key(|(key, _)| key.as_str() != "approver_groups");
    ordered
        .into_iter()
        .try_fold(current.clone(), |settings, (key, value)| {
            apply(&settings, key, value)
        })
}

/// Applies `changes` to `tenant`'s settings for `actor` (already checked to be an admin), stores
/// the result with one write, audits it (`via`: `http`, `slack`) and returns the new settings.
pub async fn update(
    store: &Store,
    tenant: &TenantId,
    actor: &UserId,
    changes: &Map<String, Value>,
    via: &str,
) -> Result<Value, SettingError> {
    // Applied to what is stored when it is written, so two admins changing different keys at
    // once both keep their change.
    let settings = store
        .tenants()
        .update_settings(tenant, |current| apply_all(current, changes))
        .await??;
    let mut keys: Vec<&String> = changes.keys().collect();
    keys.sort_unstable();
    // Only known keys get this far and none of them holds a secret, so the values are recorded.
    let values: Map<String, Value> = changes
        .keys()
        .map(|k| (k.clone(), settings.get(k).cloned().unwrap_or(Value::Null)))
        .collect();
    let record = NewAuditRecord {
        session_id: None,
        actor: Some(actor.as_str().to_owned()),
        stage: AUDIT_STAGE.into(),
        tool: None,
        status: Some("ok".into()),
        detail: json!({"keys": keys, "values": values, "via": via}),
    };
    store.audit().append(tenant, &record).await?;
    info!(tenant = %tenant, by = %actor, keys = ?keys, via, "Tenant settings changed.");
    Ok(settings)
}

/// Every known setting with its value as shown to people (`"(default: UTC)"` when unset, a note
/// when the stored value is one its reader ignores), then any other stored key as JSON.
pub fn describe(settings: &Value) -> Vec<(String, String)> {
    let mut shown: Vec<(String, String)> = KNOWN
        .iter()
        .map(|&key| {
            let text = match settings.get(key) {
                None | Some(Value::Null) => format!("(default: {})", default_of(key)),
                Some(value) => {
                    match validated(key, value, settings.as_object().unwrap_or(&Map::new())) {
                        Ok(value) => show(&value),
                        Err(_) => format!(
                            "{} (not valid, so the default applies: {})",
                            show(value),
                            default_of(key)
                        ),
                    }
                }
            };
            (key.to_owned(), text)
        })
        .collect();
    if let Value::Object(map) = settings {
        shown.extend(
            map.iter()
                .filter(|(key, _)| !KNOWN.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), show(value))),
        );
    }
    shown
}

/// The known key `key` is, or [`SettingError::Unknown`].
fn known(key: &str) -> Result<&'static str, SettingError> {
    KNOWN
        .iter()
        .copied()
        .find(|k| *k == key)
        .ok_or_else(|| SettingError::Unknown {
            key: key.chars().take(60).collect(),
        })
}

/// `value` as `key` stores it, or why it cannot be.
fn validated(
    key: &'static str,
    value: &Value,
    settings: &Map<String, Value>,
) -> Result<Value, SettingError> {
    let invalid = |reason: String| SettingError::Invalid { key, reason };
    match key {
        "timezone" => {
            let name = value.as_str().ok_or_else(|| {
                invalid(format!(
                    "is an IANA zone name such as \"Asia/Shanghai\", not {}",
                    kind(value)
                ))
            })?;
            let tz = zone(name).map_err(|e| invalid(format!("must be a known zone: {e}")))?;
            Ok(Value::from(tz.name()))
        }
        "automation_creators" => {
            let role = value
                .as_str()
                .map(|s| s.trim().to_ascii_lowercase())
                .filter(|s| matches!(s.as_str(), "member" | "approver" | "admin"))
                .ok_or_else(|| {
                    invalid(format!(
                        "is who may create automations: \"member\", \"approver\" or \"admin\", not {}",
                        show(value)
                    ))
                })?;
            Ok(Value::from(role))
        }
        "separation_of_duties" | "shell_standing_choices" => match value {
            Value::Bool(_) => Ok(value.clone()),
            _ => Err(invalid(format!("is true or false, not {}", show(value)))),
        },
        "modes_allowed" => {
            let modes = parse_modes(value).map_err(invalid)?;
            Ok(Value::from(
                modes.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
            ))
        }
        "web_fetch_allow" => Ok(Value::from(parse_hosts(value).map_err(invalid)?)),
        "network_tools" => Ok(Value::from(parse_tool_names(value).map_err(invalid)?)),
        "permissions" => {
            let example = r#"{"allowed_commands": ["git status"], "auto_allow": [], "risk_overrides": [{"pattern": "mcp__*", "risk": "read"}]}"#;
            if !value.is_object() {
                return Err(invalid(format!(
                    "is an object such as {example}, not {}",
                    kind(value)
                )));
            }
            // The engine's own parser decides, so what it would ignore is refused here.
            serde_json::from_value::<PermissionConfig>(value.clone())
                .map_err(|e| invalid(format!("is not a valid policy: {e}; e.g. {example}")))?;
            Ok(value.clone())
        }
        "gateway" => {
            crate::check_gateway_policy(value).map_err(invalid)?;
            Ok(value.clone())
        }
        "approver_groups" => crate::quorum::parse_groups(value).map_err(invalid),
        "approval_quorum" => {
            crate::quorum::parse_rules(value, settings.get("approver_groups")).map_err(invalid)
        }
        "approvals" => crate::approval_timing::parse_setting(value).map_err(invalid),
        "identity_binding" => crate::binding::parse_binding(value).map_err(invalid),
        "auth_groups" => crate::binding::parse_auth_groups(value).map_err(invalid),
        "dlp" => crate::dlp::parse_setting(value).map_err(invalid),
        "compaction" => crate::compaction::parse_setting(value).map_err(invalid),
        _ => Err(SettingError::Unknown { key: key.into() }),
    }
}

/// What an unset `key` means.
fn default_of(key: &str) -> &'static str {
    match key {
        "timezone" => "UTC",
        "automation_creators" => "member",
        "separation_of_duties" => "false",
        "modes_allowed" => "discuss, plan, interactive (admins may choose any mode)",
        "shell_standing_choices" => {
            "false (run_shell approvals offer no session-wide \"always this tool\" or \"read-only commands\")"
        }
        "web_fetch_allow" => "none (every web_fetch asks)",
        "network_tools" => "none (sandboxed commands have no network)",
        "permissions" => "no allowed_commands, auto_allow or risk_overrides",
        "gateway" => "no fallback, budgets or routes",
        "approver_groups" => "none",
        "approval_quorum" => "none (one approval is enough)",
        "approvals" => "no reminder, no expiry (a prompt waits until it is answered)",
        "identity_binding" => "not required (chat accounts need no directory link)",
        "auth_groups" => "the server's [auth.groups]",
        "dlp" => "model input not redacted (audit records and logs always are)",
        "compaction" => {
            "on: at 80% of the model's context window (at most 250,000 tokens), summarized by the session's model"
        }
        _ => "none",
    }
}

/// A value as people read it: text without quotes, anything else as compact JSON.
pub(super) fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What kind of JSON value this is, for error messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
