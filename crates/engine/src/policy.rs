//! Whether a tool call may run, must be asked about, or is refused.
//!
//! The full permission engine (modes, grants, standing rules) replaces [`MinimalPolicy`] through
//! the [`Policy`] trait. Until then: tools that declare themselves read-only run, everything else
//! asks, and nothing is refused without asking.

use std::fmt;

use workmate_protocol::ApprovalChoice;
use workmate_tools::ToolMetadata;

/// The policy's verdict on one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow {
        /// Why, for the audit trail.
        reason: String,
    },
    /// Ask a person first.
    Ask {
        /// Why asking, shown on the approval card.
        reason: String,
        /// The answers to offer.
        choices: Vec<ApprovalChoice>,
    },
    /// Refuse without asking.
    Deny {
        /// Why, shown to the model and the user.
        reason: String,
    },
}

/// Decides about tool calls.
pub trait Policy: Send + Sync + fmt::Debug {
    /// The verdict on calling `tool` with `arguments`; `metadata` is `None` for tools that declare
    /// none (treated as high risk).
    fn evaluate(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
        metadata: Option<&ToolMetadata>,
    ) -> Decision;
}

/// Read-only tools run; everything else asks once or is denied.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinimalPolicy;

impl Policy for MinimalPolicy {
    fn evaluate(
        &self,
        tool: &str,
        _arguments: &serde_json::Value,
        metadata: Option<&ToolMetadata>,
    ) -> Decision {
        match metadata {
            Some(meta) if meta.is_concurrency_safe() => Decision::Allow {
                reason: format!("{tool} only reads"),
            },
            _ => Decision::Ask {
                reason: format!("{tool} can change things"),
                choices: vec![ApprovalChoice::Once, ApprovalChoice::Deny],
            },
        }
    }
}
