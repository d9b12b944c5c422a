//! Chat accounts and the company directory: two tenant settings.
//!
//! - `identity_binding`: `{"required": true, "unbound_may_chat": false, "match": "email"}`.
//!   When `required`, a platform user who is not linked to a directory subject gets a one-time
//!   "link your account" card; they may chat only if `unbound_may_chat`, and never approve.
//!   `match` (`none`, `email`) lets an admin allow a shortcut: an account whose platform
//!   profile's e-mail address is that of exactly one known subject (one who signed in before)
//!   is linked without the card.
//! - `auth_groups`: `{"admin": ["wm-admins"], "approver": ["wm-approvers"]}`, which directory
//!   groups give which role in this tenant, in place of the server's `[auth.groups]`.
//!
//! Invariant: an unreadable stored value reads as the default (binding not required, no
//! mapping); the validators below keep such values from being stored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How chat accounts may be linked without the card.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchOn {
    /// Only through the card.
    #[default]
    None,
    /// The platform profile's e-mail address equals that of one known subject.
    Email,
}

/// The tenant setting `identity_binding`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindingPolicy {
    /// Whether chat accounts must be linked to a directory subject.
    #[serde(default)]
    pub required: bool,
    /// Whether an unlinked account may still chat (it never approves).
    #[serde(default)]
    pub unbound_may_chat: bool,
    /// The shortcut an admin allows.
    #[serde(default, rename = "match")]
    pub match_on: MatchOn,
}

/// Directory groups that give a role, as in `[auth.groups]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthGroups {
    /// Groups whose members are admins.
    #[serde(default)]
    pub admin: Vec<String>,
    /// Groups whose members are approvers.
    #[serde(default)]
    pub approver: Vec<String>,
}

/// The tenant's `identity_binding`, or the default (not required).
pub fn binding_policy(settings: &Value) -> BindingPolicy {
    settings
        .get("identity_binding")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// The tenant's `auth_groups`, when set.
pub fn auth_groups(settings: &Value) -> Option<AuthGroups> {
    settings
        .get("auth_groups")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// `identity_binding` as stored, or why not.
pub(crate) fn parse_binding(value: &Value) -> Result<Value, String> {
    let example = r#"{"required": true, "unbound_may_chat": false, "match": "email"}"#;
    let policy: BindingPolicy = serde_json::from_value(value.clone())
        .map_err(|e| format!("is an object such as {example} (match: none or email); {e}"))?;
    serde_json::to_value(policy).map_err(|e| e.to_string())
}

/// `auth_groups` as stored, or why not: lists of non-empty group names.
pub(crate) fn parse_auth_groups(value: &Value) -> Result<Value, String> {
    let example = r#"{"admin": ["wm-admins"], "approver": ["wm-approvers"]}"#;
    let groups: AuthGroups = serde_json::from_value(value.clone())
        .map_err(|e| format!("is an object such as {example}; {e}"))?;
    if groups
        .admin
        .iter()
        .chain(&groups.approver)
        .any(|g| g.trim().is_empty())
    {
        return Err(format!("names groups, none of them empty, e.g. {example}"));
    }
    serde_json::to_value(groups).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_policy_reads_with_defaults_and_refuses_unknown_fields() {
        let settings = json!({"identity_binding": {"required": true, "match": "email"}});
        let policy = binding_policy(&settings);
        assert!(policy.required && !policy.unbound_may_chat);
        assert_eq!(policy.match_on, MatchOn::Email);
        assert_eq!(binding_policy(&json!({})), BindingPolicy::default());
        assert!(parse_binding(&json!({"required": true, "match": "phone"})).is_err());
        assert!(parse_binding(&json!({"requred": true})).is_err());
        let stored = parse_binding(&json!({"required": true})).unwrap();
        assert_eq!(stored["match"], "none");
    }

    #[test]
    fn auth_groups_name_groups() {
        let value = json!({"admin": ["wm-admins"], "approver": ["sre"]});
        assert_eq!(parse_auth_groups(&value).unwrap(), value);
        assert!(parse_auth_groups(&json!({"admin": [""]})).is_err());
        assert!(parse_auth_groups(&json!({"owners": ["x"]})).is_err());
        let groups = auth_groups(&json!({"auth_groups": value})).unwrap();
        assert_eq!(groups.approver, vec!["sre".to_owned()]);
    }
}
