//! Approval quorums: which calls need several distinct approvers, and who counts.
//!
//! Two tenant settings: `approver_groups`, named lists of user ids and directory groups
//! (`{"sre": ["ana", "bo", "group:sre-oncall"]}`; a `group:` entry counts everyone whose
//! directory groups, as of their last sign-in or link, include it),
//! and `approval_quorum`, rules that each cover a tool category and, optionally, some channels:
//! `[{"category": "shell", "channels": ["C-prod*"], "required": 2, "group": "sre"}]`.
//!
//! A rule with `required: 1` and a group is an approver group for what it covers: one approval
//! is enough, but only from the group's members.
//!
//! Invariants: the first rule that covers a call decides (so a narrow rule goes before a broad
//! one); a call no rule covers needs one approval from anyone who may answer, as before;
//! `required` is 1 (with a group) to [`MAX_REQUIRED`]; a rule's group must be one of
//! `approver_groups`, so a setting cannot name a group nobody is in; when more than one approval
//! is needed, the requester never counts, whatever group they are in.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use workmate_protocol::UserId;

/// The most approvals a rule may require.
pub const MAX_REQUIRED: u32 = 10;

/// One `approval_quorum` rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuorumRule {
    /// The tool category it covers (`shell`, `files`, a connector's name), or `*` for every one.
    pub category: String,
    /// The channels (chat ids) it covers; none: every channel. A trailing `*` matches any chat
    /// id that starts with what comes before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
    /// How many distinct approvers must allow the call.
    pub required: u32,
    /// The approver group whose members count; none: any approver or admin of the tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// What a call needs: `required` distinct approvals, from `group` when one is named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quorum {
    /// How many.
    pub required: u32,
    /// From whom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

impl QuorumRule {
    fn covers(&self, category: &str, chat_id: &str) -> bool {
        let category_ok = self.category == "*" || self.category.eq_ignore_ascii_case(category);
        let channel_ok = self.channels.is_empty()
            || self.channels.iter().any(|c| match c.strip_suffix('*') {
                Some(prefix) => chat_id.starts_with(prefix),
                None => c == chat_id,
            });
        category_ok && channel_ok
    }
}

/// The quorum a call of `category` in chat `chat_id` needs under the tenant's `settings`, when
/// it needs more than one approval or approvals from a group.
pub fn quorum_for(settings: &Value, category: &str, chat_id: &str) -> Option<Quorum> {
    let rules: Vec<QuorumRule> = settings
        .get("approval_quorum")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default();
    rules
        .into_iter()
        .find(|rule| rule.covers(category, chat_id))
        .filter(|rule| rule.required > 1 || rule.group.is_some())
        .map(|rule| Quorum {
            required: rule.required.min(MAX_REQUIRED),
            group: rule.group,
        })
}

/// The members of approver group `group` under `settings`.
pub fn group_members(settings: &Value, group: &str) -> Vec<UserId> {
    settings
        .get("approver_groups")
        .and_then(|g| g.get(group))
        .and_then(Value::as_array)
        .map(|members| {
            members
                .iter()
                .filter_map(Value::as_str)
                .map(UserId::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The prefix of an `approver_groups` entry that names a directory group rather than a user.
pub const DIRECTORY_GROUP_PREFIX: &str = "group:";

/// Whether `user`, whose directory groups are `directory_groups`, is in approver group `group`
/// under `settings`: listed by id, or in a directory group the list names (`group:<name>`).
pub fn is_member(
    settings: &Value,
    group: &str,
    user: &UserId,
    directory_groups: &[String],
) -> bool {
    group_members(settings, group).iter().any(|member| {
        match member.as_str().strip_prefix(DIRECTORY_GROUP_PREFIX) {
            Some(name) => directory_groups.iter().any(|g| g == name),
            None => member == user,
        }
    })
}

/// `approver_groups` as stored, or why not: an object of non-empty lists of user ids.
pub(crate) fn parse_groups(value: &Value) -> Result<Value, String> {
    let example = r#"{"sre": ["ana", "bo", "cy"]}"#;
    let Some(groups) = value.as_object() else {
        return Err(format!(
            "is an object of named lists of user ids, such as {example}"
        ));
    };
    for (name, members) in groups {
        let ok = members.as_array().is_some_and(|m| {
            !m.is_empty()
                && m.iter()
                    .all(|u| u.as_str().is_some_and(|u| !u.trim().is_empty()))
        });
        if name.trim().is_empty() || !ok {
            return Err(format!(
                "group `{name}` must be a non-empty list of user ids, such as {example}"
            ));
        }
    }
    Ok(value.clone())
}

/// `approval_quorum` as stored, or why not; `groups` is the tenant's `approver_groups` as it will
/// be (a rule may name only one of them).
pub(crate) fn parse_rules(value: &Value, groups: Option<&Value>) -> Result<Value, String> {
    let example =
        r#"[{"category": "shell", "channels": ["C-prod*"], "required": 2, "group": "sre"}]"#;
    let rules: Vec<QuorumRule> = serde_json::from_value(value.clone())
        .map_err(|e| format!("is a list of rules such as {example} ({e})"))?;
    for rule in &rules {
        let least = if rule.group.is_some() { 1 } else { 2 };
        if !(least..=MAX_REQUIRED).contains(&rule.required) {
            return Err(format!(
                "rule for `{}` requires {} approvals; a rule requires 2 to {MAX_REQUIRED} (or 1 \
                 when it names an approver group)",
                rule.category, rule.required
            ));
        }
        if rule.category.trim().is_empty() {
            return Err(format!(
                "every rule names a category (or \"*\"), e.g. {example}"
            ));
        }
        if let Some(group) = &rule.group
            && groups.and_then(|g| g.get(group)).is_none()
        {
            return Err(format!(
                "rule for `{}` names approver group `{group}`, which `approver_groups` does not define",
                rule.category
            ));
        }
    }
    serde_json::to_value(rules).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_first_covering_rule_decides() {
        let settings = json!({
            "approver_groups": {"sre": ["ana", "bo", "cy"]},
            "approval_quorum": [
                {"category": "shell", "channels": ["C-prod*"], "required": 2, "group": "sre"},
                {"category": "*", "channels": ["C-bank"], "required": 3},
            ],
        });
        let prod = quorum_for(&settings, "shell", "C-prod-eu").unwrap();
        assert_eq!(
            prod,
            Quorum {
                required: 2,
                group: Some("sre".into())
            }
        );
        assert_eq!(quorum_for(&settings, "shell", "C-dev"), None);
        assert_eq!(
            quorum_for(&settings, "files", "C-bank").unwrap().required,
            3
        );
        assert_eq!(quorum_for(&json!({}), "shell", "C-prod"), None);
        let group_only =
            json!({"approval_quorum": [{"category": "files", "required": 1, "group": "sre"}]});
        let one_from_sre = quorum_for(&group_only, "files", "C-any").unwrap();
        assert_eq!(
            one_from_sre,
            Quorum {
                required: 1,
                group: Some("sre".into())
            }
        );
        assert_eq!(group_members(&settings, "sre").len(), 3);
        assert!(group_members(&settings, "nobody").is_empty());
        let settings = json!({"approver_groups": {"sre": ["ana", "group:sre-oncall"]}});
        let oncall = ["sre-oncall".to_owned()];
        assert!(is_member(&settings, "sre", &"ana".into(), &[]));
        assert!(is_member(&settings, "sre", &"slack-U7".into(), &oncall));
        assert!(!is_member(&settings, "sre", &"slack-U7".into(), &[]));
        assert!(!is_member(
            &settings,
            "sre",
            &"group:sre-oncall".into(),
            &[]
        ));
    }

    #[test]
    fn settings_say_what_is_wrong() {
        let groups = json!({"sre": ["ana", "bo"]});
        assert!(parse_groups(&groups).is_ok());
        assert!(
            parse_groups(&json!({"sre": []}))
                .unwrap_err()
                .contains("non-empty")
        );
        assert!(parse_groups(&json!(["ana"])).is_err());
        let ok = json!([{"category": "shell", "required": 2, "group": "sre"}]);
        assert!(parse_rules(&ok, Some(&groups)).is_ok());
        let one = json!([{"category": "shell", "required": 1}]);
        assert!(parse_rules(&one, None).unwrap_err().contains("2 to 10"));
        let group_only = json!([{"category": "shell", "required": 1, "group": "sre"}]);
        assert!(parse_rules(&group_only, Some(&groups)).is_ok());
        let unknown = json!([{"category": "shell", "required": 2, "group": "ops"}]);
        assert!(
            parse_rules(&unknown, Some(&groups))
                .unwrap_err()
                .contains("`ops`")
        );
        let typo = json!([{"category": "shell", "required": 2, "grup": "sre"}]);
        assert!(parse_rules(&typo, Some(&groups)).is_err());
    }
}
