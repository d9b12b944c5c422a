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

use crate::permissions::PermissionConfig;
use serde_json::{Map, Value, json};
use tracing::info;
use workmate_protocol::{PermissionMode, TenantId, UserId};
use workmate_store::{NewAuditRecord, Store};
use workmate_tools::automations::zone;

/// The settings an admin may change, in the order they are shown.
pub const KNOWN: [&str; 9] = [
    "timezone",
    "automation_creators",
    "separation_of_duties",
    "modes_allowed",
    "permissions",
    "shell_standing_choices",
    "web_fetch_allow",
    "network_tools",
    "gateway",
];

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

fn parse_tool_names(value: &Value) -> Result<Vec<String>, String> {
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

fn parse_modes(value: &Value) -> Result<Vec<PermissionMode>, String> {
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

fn parse_hosts(value: &Value) -> Result<Vec<String>, String> {
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

/// The audit stage of a settings change.
pub const AUDIT_STAGE: &str = "tenant_settings_changed";

/// Why a settings change was not made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
        settings.insert(key.to_owned(), validated(key, value)?);
    }
    Ok(Value::Object(settings))
}

/// `current` with every change in `changes` applied, or the first error (nothing applied).
pub fn apply_all(current: &Value, changes: &Map<String, Value>) -> Result<Value, SettingError> {
    if changes.is_empty() {
        return Err(SettingError::Empty);
    }
    changes
        .iter()
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
                Some(value) => match validated(key, value) {
                    Ok(value) => show(&value),
                    Err(_) => format!(
                        "{} (not valid, so the default applies: {})",
                        show(value),
                        default_of(key)
                    ),
                },
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
fn validated(key: &'static str, value: &Value) -> Result<Value, SettingError> {
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
        _ => "none",
    }
}

/// A value as people read it: text without quotes, anything else as compact JSON.
fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What kind of JSON value this is, for error messages.
fn kind(value: &Value) -> &'static str {
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
mod tests {
    use super::*;

    fn shown(settings: &Value, key: &str) -> String {
        describe(settings)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .unwrap()
    }

    #[test]
    fn a_key_is_set_or_removed_and_the_others_are_kept() {
        let current = json!({"gateway": {"retries": 1}, "timezone": "UTC"});
        let set = apply(&current, "timezone", &json!(" Asia/Shanghai ")).unwrap();
        assert_eq!(
            set,
            json!({"gateway": {"retries": 1}, "timezone": "Asia/Shanghai"})
        );
        let removed = apply(&set, "timezone", &Value::Null).unwrap();
        assert_eq!(removed, json!({"gateway": {"retries": 1}}));
        // A non-object (never stored by the service) starts over from an empty object.
        assert_eq!(
            apply(&Value::Null, "separation_of_duties", &json!(true)).unwrap(),
            json!({"separation_of_duties": true})
        );
    }

    #[test]
    fn each_known_key_takes_only_what_its_reader_accepts() {
        let empty = json!({});
        let error = apply(&empty, "timezone", &json!("Mars/Olympus"))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("`timezone` must be a known zone"),
            "{error}"
        );
        assert!(error.contains("Mars/Olympus"), "{error}");
        assert!(apply(&empty, "timezone", &json!(8)).is_err());

        assert_eq!(
            apply(&empty, "automation_creators", &json!("Admin")).unwrap(),
            json!({"automation_creators": "admin"})
        );
        let error = apply(&empty, "automation_creators", &json!("owner"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("\"member\", \"approver\" or \"admin\""),
            "{error}"
        );

        assert!(apply(&empty, "separation_of_duties", &json!(false)).is_ok());
        assert!(apply(&empty, "separation_of_duties", &json!("true")).is_err());
        assert!(apply(&empty, "separation_of_duties", &json!(1)).is_err());
    }

    #[test]
    fn permissions_are_checked_by_the_engines_parser() {
        let empty = json!({});
        let policy = json!({"allowed_commands": ["git status"], "risk_overrides": [{"pattern": "mcp__*", "risk": "read"}]});
        assert_eq!(
            apply(&empty, "permissions", &policy).unwrap(),
            json!({ "permissions": policy })
        );
        let typo = apply(&empty, "permissions", &json!({"allowed_command": ["ls"]}))
            .unwrap_err()
            .to_string();
        assert!(typo.contains("unknown field `allowed_command`"), "{typo}");
        let risk = apply(
            &empty,
            "permissions",
            &json!({"risk_overrides": [{"pattern": "*", "risk": "harmless"}]}),
        )
        .unwrap_err()
        .to_string();
        assert!(risk.contains("harmless"), "{risk}");
        // serde would read a struct from an array; the setting must be an object.
        let array = apply(&empty, "permissions", &json!([[], [], []]))
            .unwrap_err()
            .to_string();
        assert!(array.contains("not an array"), "{array}");
    }

    #[test]
    fn the_gateway_policy_is_checked_by_the_engine() {
        let empty = json!({});
        let policy = json!({"fallback": ["openai:gpt-4o-mini"], "daily_tokens": 2_000_000});
        assert_eq!(
            apply(&empty, "gateway", &policy).unwrap()["gateway"],
            policy
        );
        for bad in [
            json!({"fallbacks": []}),
            json!({"sensitive": true}),
            json!(["openai:gpt-4o-mini"]),
        ] {
            assert!(apply(&empty, "gateway", &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unknown_keys_are_refused_with_the_known_ones() {
        let error = apply(&json!({}), "time_zone", &json!("UTC"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "unknown setting `time_zone`; the settings are timezone, automation_creators, \
             separation_of_duties, modes_allowed, permissions, shell_standing_choices, \
             web_fetch_allow, network_tools, gateway"
        );
    }

    #[test]
    fn modes_allowed_lists_modes_and_defaults_to_the_safe_three() {
        let empty = json!({});
        assert_eq!(modes_allowed(&empty), DEFAULT_MODES_ALLOWED.to_vec());
        let set = apply(&empty, "modes_allowed", &json!(["Plan", "auto", "plan"])).unwrap();
        assert_eq!(set, json!({"modes_allowed": ["plan", "auto"]}));
        assert_eq!(
            modes_allowed(&set),
            vec![PermissionMode::Plan, PermissionMode::Auto]
        );
        let error = apply(&empty, "modes_allowed", &json!(["yolo"]))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("yolo") && error.contains("discuss"),
            "{error}"
        );
        assert!(apply(&empty, "modes_allowed", &json!("auto")).is_err());
        // An unreadable stored value falls back to the default, and says so.
        let stored = json!({"modes_allowed": "auto"});
        assert_eq!(modes_allowed(&stored), DEFAULT_MODES_ALLOWED.to_vec());
        assert!(shown(&stored, "modes_allowed").contains("not valid"));
        assert!(shown(&empty, "modes_allowed").starts_with("(default: discuss, plan, interactive"));
    }

    #[test]
    fn shell_choices_and_web_fetch_hosts() {
        let empty = json!({});
        assert!(!shell_standing_choices(&empty));
        let on = apply(&empty, "shell_standing_choices", &json!(true)).unwrap();
        assert!(shell_standing_choices(&on));
        assert!(apply(&empty, "shell_standing_choices", &json!("yes")).is_err());
        assert!(web_fetch_allow(&empty).is_empty());
        assert!(network_tools(&empty).is_empty());
        let online = apply(&empty, "network_tools", &json!(["run_shell", "run_shell"])).unwrap();
        assert_eq!(network_tools(&online), ["run_shell"]);
        assert!(apply(&empty, "network_tools", &json!(["rm -rf"])).is_err());
        assert!(apply(&empty, "network_tools", &json!("run_shell")).is_err());
        let hosts = apply(
            &empty,
            "web_fetch_allow",
            &json!([" Docs.rs ", "*.example.com"]),
        )
        .unwrap();
        assert_eq!(
            hosts,
            json!({"web_fetch_allow": ["docs.rs", "*.example.com"]})
        );
        assert_eq!(web_fetch_allow(&hosts), vec!["docs.rs", "*.example.com"]);
        for bad in [
            json!(["*"]),
            json!(["https://docs.rs"]),
            json!("docs.rs"),
            json!([1]),
        ] {
            assert!(apply(&empty, "web_fetch_allow", &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_batch_is_applied_whole_or_not_at_all() {
        let current = json!({"timezone": "Europe/Berlin"});
        let mut changes = Map::new();
        changes.insert("automation_creators".into(), json!("approver"));
        changes.insert("timezone".into(), json!("Asia/Tokyo"));
        assert_eq!(
            apply_all(&current, &changes).unwrap(),
            json!({"automation_creators": "approver", "timezone": "Asia/Tokyo"})
        );
        changes.insert("separation_of_duties".into(), json!("yes"));
        assert!(matches!(
            apply_all(&current, &changes),
            Err(SettingError::Invalid {
                key: "separation_of_duties",
                ..
            })
        ));
        assert!(matches!(
            apply_all(&current, &Map::new()),
            Err(SettingError::Empty)
        ));
    }

    #[test]
    fn settings_are_described_with_their_defaults() {
        let described = describe(&json!({}));
        let keys: Vec<&str> = described.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, KNOWN);
        assert_eq!(shown(&json!({}), "timezone"), "(default: UTC)");
        assert_eq!(
            shown(&json!({}), "automation_creators"),
            "(default: member)"
        );
        assert_eq!(
            shown(&json!({}), "separation_of_duties"),
            "(default: false)"
        );

        let settings = json!({
            "timezone": "Asia/Shanghai",
            "separation_of_duties": true,
            "permissions": {"auto_allow": ["web_fetch"]},
            "automation_creators": "boss",
            "gateway": {"retries": 1},
        });
        assert_eq!(shown(&settings, "timezone"), "Asia/Shanghai");
        assert_eq!(shown(&settings, "separation_of_duties"), "true");
        assert_eq!(
            shown(&settings, "permissions"),
            r#"{"auto_allow":["web_fetch"]}"#
        );
        assert_eq!(
            shown(&settings, "automation_creators"),
            "boss (not valid, so the default applies: member)"
        );
        assert_eq!(shown(&settings, "gateway"), r#"{"retries":1}"#);
    }
}
