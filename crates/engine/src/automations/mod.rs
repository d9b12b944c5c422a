//! The automation service over the store: creating, changing, deleting and showing automations,
//! and the standing rules they ask for. The HTTP API, the chat commands and the agent's
//! scheduling tools (through [`crate::tool_repos`]) all go through it; the request types, the
//! schedule and the settings are the tools crate's plain types, re-exported here so a caller
//! has one place to import from.

mod rules;
mod service;

pub use rules::{
    ask_for_rules, check_approver, close_rule_requests, may_grant_rules, settle_requested_rules,
};
pub use service::{
    AutomationError, change, check_creator, check_manager, create, delete, public_view,
    tenant_timezone,
};
pub use workmate_tools::automations::{
    AutomationChange, AutomationDraft, ChangedBy, PermissionRequest, RULES_ITEM,
};
