//! Which calls a restart may simply run again.
//!
//! Invariant: a call is repeatable only when running it twice cannot have a different effect
//! from running it once: its tool declares itself idempotent (reads, fetches), or it is a shell
//! command that only reads the session's own folders (the same test the read-only session grant
//! uses). Everything else a restart finds started is answered "outcome unknown".

use workmate_protocol::ToolCall;

use super::Turn;
use crate::permissions::{RiskClass, is_read_only_command};

impl Turn {
    /// Whether `call` may run again when a restart finds it started but not finished.
    pub(crate) fn repeatable(&self, call: &ToolCall) -> bool {
        let metadata = self.tools.metadata(&call.name);
        if metadata.as_ref().is_some_and(|m| m.idempotent) {
            return true;
        }
        let exec = self.permissions.classify(&call.name, metadata.as_ref()) == RiskClass::Exec;
        exec && call
            .arguments
            .get("command")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|command| is_read_only_command(command.trim(), &self.roots))
    }
}
