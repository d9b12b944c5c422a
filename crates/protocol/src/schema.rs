//! JSON Schemas of the contract, generated from the types. The copies under `docs/contract/` are
//! checked against these by the crate's tests, so the published schema cannot drift from the code.

use crate::command::Command;
use crate::event::Event;

/// The JSON Schema (draft 2020-12) of [`Event`].
pub fn event_schema() -> serde_json::Value {
    schemars::schema_for!(Event).to_value()
}

/// The JSON Schema (draft 2020-12) of [`Command`].
pub fn command_schema() -> serde_json::Value {
    schemars::schema_for!(Command).to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_describe_the_tags() {
        let text = event_schema().to_string();
        assert!(text.contains("\"turn_start\"") && text.contains("\"session_created\""));
        let text = command_schema().to_string();
        assert!(text.contains("\"resolve_inbox\"") && text.contains("base64 data URL"));
    }
}
