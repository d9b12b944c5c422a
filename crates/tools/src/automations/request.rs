//! What callers ask of automations: a new one (a draft), a change, and who asks. Plain request
//! types, shared by the HTTP API, the chat commands and the agent's tools; the service that
//! validates and stores them is the engine's.
//!
//! Invariant: a request body can never carry `requested_rules` (skipped by serde); only a caller
//! that validated them sets it.

use serde::Deserialize;
use workmate_protocol::UserId;

use super::{RunTarget, StandingRule};

/// A new automation as a person or the agent describes it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutomationDraft {
    /// Short title.
    pub title: String,
    /// What each run does.
    pub instructions: String,
    /// A 5-field cron expression (or `fire_at`).
    pub cron: Option<String>,
    /// A one-off time (or `cron`).
    pub fire_at: Option<String>,
    /// IANA zone; the tenant's `timezone` setting (else UTC) when absent.
    pub timezone: Option<String>,
    /// Persona of its runs.
    pub persona: Option<String>,
    /// Model of its runs.
    pub model: Option<String>,
    /// Where results and approval cards go.
    pub target: Option<RunTarget>,
    /// Standing permissions asked for at creation; only `write` entries become rules.
    pub permissions: Vec<PermissionRequest>,
    /// How many runs it gets.
    pub max_runs: Option<u32>,
    /// Whether it starts enabled (default true).
    pub enabled: Option<bool>,
    /// Standing rules stored as waiting for an approver instead of granted. Set by the caller
    /// after it has validated them, never from a request body.
    #[serde(skip)]
    pub requested_rules: Vec<StandingRule>,
}

/// One permission asked for at creation.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionRequest {
    /// The tool.
    pub tool: String,
    /// Its exact target.
    #[serde(default)]
    pub target: String,
    /// `read` (disclosed only) or `write` (becomes a standing rule).
    #[serde(default)]
    pub access: String,
}

/// Who changes an automation, and through which surface (`http`, `slack`, `agent`, …).
#[derive(Clone, Copy, Debug)]
pub struct ChangedBy<'a> {
    /// The person.
    pub user: &'a UserId,
    /// The surface.
    pub via: &'a str,
}

/// A change to an automation; absent fields stay as they are.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutomationChange {
    /// New title.
    pub title: Option<String>,
    /// New instructions.
    pub instructions: Option<String>,
    /// New cron expression (makes it a cron schedule).
    pub cron: Option<String>,
    /// New one-off time (makes it a one-off schedule).
    pub fire_at: Option<String>,
    /// New zone.
    pub timezone: Option<String>,
    /// Pause (`false`) or resume (`true`).
    pub enabled: Option<bool>,
    /// New target thread.
    pub target: Option<RunTarget>,
    /// New run cap.
    pub max_runs: Option<u32>,
    /// A standing rule to remove, as `"<tool> <target>"`.
    pub revoke: Option<String>,
}

impl AutomationChange {
    /// The names of the fields this change sets.
    pub fn changed(&self) -> Vec<&'static str> {
        [
            ("title", self.title.is_some()),
            ("instructions", self.instructions.is_some()),
            ("cron", self.cron.is_some()),
            ("fire_at", self.fire_at.is_some()),
            ("timezone", self.timezone.is_some()),
            ("enabled", self.enabled.is_some()),
            ("target", self.target.is_some()),
            ("max_runs", self.max_runs.is_some()),
            ("revoke", self.revoke.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
}
