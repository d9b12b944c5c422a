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
mod repo;
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
pub use memory::{
    MemoryForget, MemoryRead, MemoryRecord, MemoryRepo, MemoryScope, MemoryUpdate, NewMemory,
    Remember,
};
pub use registry::ToolRegistry;
pub use repo::{RepoError, RepoFuture, ToolRepos};
pub use roots::{Access, resolve, session_workspace};
pub use shell::RunShell;
pub use shell::git::{GitSandbox, SandboxedCommand};
pub use shell::sandbox::{SANDBOX_UID, Sandbox, ShellSandbox};
pub use skills::{LoadSkill, NewSkill, SaveSkill, SkillEntry, SkillRepo, SkillScope};
pub use source::{ConnectorGrant, ToolScope, ToolSource, ToolsFuture};
pub use tool::{
    RiskLevel, Root, Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolResult,
};
pub use wake::{
    InvalidEventKey, JobStatus, NewWake, SleepUntil, WakeOn, WakeOnEvent, WakeRepo, WakeTrigger,
    check_event_key, wake_tools,
};
pub use web_fetch::WebFetch;
