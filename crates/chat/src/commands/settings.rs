//! `/workmate settings [KEY VALUE]`: the workspace's tenant settings, from a chat.
//!
//! Invariants: anyone lists the settings; only a tenant admin changes one, and the change goes
//! through [`workmate_engine::tenant_settings::update`], so it is validated, stored and audited
//! exactly as `PATCH /v1/tenant/settings` does it.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};
use workmate_store::Role;

use workmate_engine::tenant_settings::{SettingError, describe, update};

use super::{Caller, Outcome, role_name};
use crate::{Chat, Result};

/// The value text that restores a setting's default.
const DEFAULT_WORD: &str = "default";

impl Chat {
    /// Lists the settings (`None`) or sets one.
    pub(super) async fn settings(
        &self,
        caller: &Caller,
        change: Option<(String, String)>,
    ) -> Result<Outcome> {
        match change {
            None => self.list_settings(caller).await,
            Some((key, value)) => self.set_setting(caller, key, &value).await,
        }
    }

    async fn list_settings(&self, caller: &Caller) -> Result<Outcome> {
        let settings = self
            .store()
            .tenants()
            .get(&caller.person.tenant)
            .await?
            .map_or_else(|| json!({}), |t| t.settings);
        let mut text = String::from(
            "Workspace settings (admins change one with `/workmate settings KEY VALUE`; \
             `default` restores the default):",
        );
        for (key, shown) in describe(&settings) {
            let _ = write!(text, "\n• {key}: {shown}");
        }
        Ok(Outcome::ok(text))
    }

    async fn set_setting(&self, caller: &Caller, key: String, raw: &str) -> Result<Outcome> {
        if caller.person.role() != Role::Admin {
            return Ok(Outcome::refused(format!(
                "Only admins may change workspace settings; you are {}. `/workmate settings` \
                 shows them to everyone.",
                role_name(caller.person.role())
            )));
        }
        let value = value_of(raw);
        let removing = value.is_null();
        let mut changes = Map::new();
        changes.insert(key.clone(), value);
        let settings = match update(
            self.store(),
            &caller.person.tenant,
            &caller.person.user.id,
            &changes,
            caller.surface.as_str(),
        )
        .await
        {
            Ok(settings) => settings,
            Err(SettingError::Store(e)) => return Err(e.into()),
            Err(e) => return Ok(Outcome::refused(format!("Not changed: {e}."))),
        };
        let shown = describe(&settings)
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, shown)| shown)
            .unwrap_or_default();
        Ok(Outcome::ok(if removing {
            format!("Removed `{key}`: {shown}.")
        } else {
            format!("Set `{key}` to {shown}.")
        }))
    }
}

/// The value typed after the key: `default` is JSON null (remove the key), text that parses as
/// JSON (`true`, `"x"`, `{…}`) is that JSON, anything else (`Asia/Shanghai`) is a string.
fn value_of(raw: &str) -> Value {
    let raw = raw.trim();
    if raw.eq_ignore_ascii_case(DEFAULT_WORD) {
        return Value::Null;
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_json_when_they_parse_and_text_otherwise() {
        assert_eq!(value_of("true"), json!(true));
        assert_eq!(value_of(" Default "), Value::Null);
        assert_eq!(value_of("Asia/Shanghai"), json!("Asia/Shanghai"));
        assert_eq!(value_of("\"admin\""), json!("admin"));
        assert_eq!(
            value_of(r#"{"allowed_commands": ["git status"]}"#),
            json!({"allowed_commands": ["git status"]})
        );
        // Broken JSON stays text, which the setting then refuses with what it takes.
        assert_eq!(value_of("{\"a\": "), json!("{\"a\":"));
    }
}
