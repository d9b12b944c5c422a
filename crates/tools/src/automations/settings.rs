//! What an automation keeps besides its title, instructions and schedule.

use serde::{Deserialize, Serialize};
use workmate_protocol::Surface;

/// The settings stored with an automation (`settings_json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AutomationSettings {
    /// The persona its runs use (the tenant's default when absent).
    pub persona: Option<String>,
    /// The model its runs use (the default model when absent).
    pub model: Option<String>,
    /// The chat thread its results and approval cards go to.
    pub target: Option<RunTarget>,
    /// Calls its runs may make without asking: one tool, one exact target each.
    pub standing_rules: Vec<StandingRule>,
    /// Standing rules asked for by an owner who may not grant them: they wait for an approver
    /// or an admin, and do nothing until then.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requested_rules: Vec<StandingRule>,
    /// How many runs it gets before it stops (unlimited when absent).
    pub max_runs: Option<u32>,
}

impl AutomationSettings {
    /// Reads stored settings; anything unreadable falls back to the defaults field by field.
    pub fn from_json(value: &serde_json::Value) -> Self {
        serde_json::from_value(value.clone()).unwrap_or_default()
    }

    /// The settings as stored.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Adds a standing rule unless it is there already; `true` if it was added.
    pub fn add_rule(&mut self, rule: StandingRule) -> bool {
        if self.standing_rules.contains(&rule) {
            return false;
        }
        self.standing_rules.push(rule);
        true
    }
}

/// A chat thread on a platform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunTarget {
    /// The platform.
    pub surface: Surface,
    /// The chat (channel, group) id.
    pub chat_id: String,
    /// The thread in it (empty: the chat itself).
    #[serde(default)]
    pub thread_id: String,
}

/// "Always allow `tool` on `target` in this automation's runs."
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingRule {
    /// The tool.
    pub tool: String,
    /// The exact target (an address, a channel id, …).
    pub target: String,
}

impl StandingRule {
    /// The rule as one entry: `"<tool> <target>"`.
    pub fn entry(&self) -> String {
        format!("{} {}", self.tool, self.target)
    }
}
