//! Automations as the engine, the API and the agent's tools share them: the schedule and the
//! settings stored with each automation, the requests callers make, the agent's scheduling tools
//! and the repository they use ([`AutomationRepo`]). The service that validates and stores
//! requests is the engine's (`workmate_engine::automations`).

mod repo;
mod request;
mod schedule;
mod settings;
mod tools;

pub use repo::AutomationRepo;
pub use request::{AutomationChange, AutomationDraft, ChangedBy, PermissionRequest};
pub use schedule::{Schedule, ScheduleError, format_in, zone};
pub use settings::{AutomationSettings, RunTarget, StandingRule};

pub use tools::{
    CreateScheduledTask, DeleteScheduledTask, ListScheduledTasks, UpdateScheduledTask,
    scheduling_tools,
};

/// The inbox item that carries an automation's requested rules names the automation under this
/// key of its `data`; the engine grants or drops the rules when the item is answered.
pub const RULES_ITEM: &str = "automation_rules";
