//! workmate's contract: the events a session emits, the commands surfaces send it, the canonical
//! conversation messages, and the ids that tie them together.
//!
//! Types only: serde and JSON Schema, no I/O, no behaviour beyond tiny helpers. Every enum is
//! `#[non_exhaustive]` and internally tagged (`type`, or `role` for messages), so a new variant is
//! an additive change. Changing or removing anything here is a versioned decision recorded in
//! `docs/adr/`; the generated schemas under `docs/contract/` are checked by the tests.
#![warn(missing_docs)]

mod command;
mod common;
mod compaction;
mod event;
mod event_kind;
mod ids;
mod inbox;
mod message;
mod schema;
mod surface;

pub use command::{Attachment, AttachmentKind, Command};
pub use common::{Actor, ApprovalChoice, PermissionMode, TokenUsage, ToolCall, ToolSpec};
pub use compaction::CompactionView;
pub use event::{Event, ToolStatus, TurnEndStatus};
pub use event_kind::EventKind;
pub use ids::{
    AutomationId, InboxItemId, RunId, SessionId, TenantId, ToolCallId, TurnId, UserId, WakeId,
};
pub use inbox::{InboxItemKind, Question, QuestionOption, Resolution, Visibility};
pub use message::{
    ContentPart, FileData, ImageUrl, Message, NoticeKind, ProviderState, UserContent,
};
pub use schema::{command_schema, event_schema};
pub use surface::{Surface, UnknownSurface};
