//! Tools: the contract every tool implements, the registry the engine looks them up in, and the
//! built-in tools.
//!
//! Invariant: a tool without metadata is treated as high risk and requiring approval; only the
//! metadata a tool declares can make it cheaper to run.

mod registry;
mod tool;

pub use registry::ToolRegistry;
pub use tool::{
    RiskLevel, Root, Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolResult,
};
