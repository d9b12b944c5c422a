//! Tools: the contract every tool implements, the registry the engine looks them up in, and the
//! built-in tools.
//!
//! Invariant: a tool without metadata is treated as high risk and requiring approval; only the
//! metadata a tool declares can make it cheaper to run.

pub mod args;
pub mod automations;
mod builtin;
mod files;
mod memory;
mod registry;
pub mod roots;
mod shell;
mod skills;
mod source;
mod tool;
mod wake;
pub mod web_fetch;

pub use automations::{
    CreateScheduledTask, DeleteScheduledTask, ListScheduledTasks, UpdateScheduledTask,
    scheduling_tools,
};
pub use builtin::{BuiltinOptions, builtin_registry};
pub use files::grep::Grep;
pub use files::list::ListFiles;
pub use files::patch::ApplyPatch;
pub use files::read::ReadFile;
pub use files::replace::ReplaceInFile;
pub use files::write::WriteFile;
pub use memory::{MemoryForget, MemoryRead, MemoryUpdate, Remember};
pub use registry::ToolRegistry;
pub use roots::{Access, resolve, session_workspace};
pub use shell::RunShell;
pub use shell::sandbox::{SANDBOX_UID, Sandbox, ShellSandbox};
pub use skills::{LoadSkill, SaveSkill};
pub use source::{ToolScope, ToolSource, ToolsFuture};
pub use tool::{
    RiskLevel, Root, Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolResult,
};
pub use wake::{InvalidEventKey, SleepUntil, WakeOn, WakeOnEvent, check_event_key, wake_tools};
pub use web_fetch::WebFetch;
