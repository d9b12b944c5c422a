//! Automations as the engine, the API and the agent's tools share them: the schedule and the
//! settings stored with each automation, the service every caller goes through, and the agent's
//! scheduling tools.

mod rules;
mod schedule;
mod service;
mod settings;
mod tools;

pub use rules::{
    RULES_ITEM, ask_for_rules, check_approver, close_rule_requests, may_grant_rules,
    settle_requested_rules,
};
pub use schedule::{Schedule, ScheduleError, format_in, zone};
pub use service::{
    AutomationChange, AutomationDraft, AutomationError, ChangedBy, PermissionRequest, change,
    check_creator, check_manager, create, delete, public_view, tenant_timezone,
};
pub use settings::{AutomationSettings, RunTarget, StandingRule};
pub use tools::{
    CreateScheduledTask, DeleteScheduledTask, ListScheduledTasks, UpdateScheduledTask,
    scheduling_tools,
};
