//! Automations as the engine, the API and the agent's tools share them: the schedule and the
//! settings stored with each automation.

mod schedule;
mod settings;

pub use schedule::{Schedule, ScheduleError, format_in, zone};
pub use settings::{AutomationSettings, RunTarget, StandingRule};
