//! Automations as the engine, the API and the agent's tools share them: the schedule and the
//! settings stored with each automation, the service every caller goes through, and the agent's
//! scheduling tools.

mod schedule;
mod service;
mod settings;
mod tools;

pub use schedule::{Schedule, ScheduleError, format_in, zone};
pub use service::{
    AutomationChange, AutomationDraft, AutomationError, PermissionRequest, RULES_ITEM,
    ask_for_rules, change, check_approver, check_creator, check_manager, close_rule_requests,
    create, may_grant_rules, public_view, settle_requested_rules, tenant_timezone,
};
pub use settings::{AutomationSettings, RunTarget, StandingRule};
pub use tools::{
    CreateScheduledTask, DeleteScheduledTask, ListScheduledTasks, UpdateScheduledTask,
    scheduling_tools,
};
