//! Typed decoding of the three kinds of body Slack posts to an app.
//!
//! Invariant: decoding never panics and never fails on things Slack may add later. Unknown
//! envelope, event and interaction types decode to an `Other` variant, and unknown fields are
//! ignored. An error means the body is not a Slack body at all (bad JSON, no `type`, a missing
//! required field). Fields that Slack leaves out in some shapes (message edits, modals,
//! org-wide installs) are `Option`s; the mapping layer decides what it can route.
//!
//! Call these only on bodies that [`crate::verify_request`] accepted.

mod command;
mod events;
mod interaction;

pub use command::{SlashCommand, decode_slash_command};
pub use events::{
    Event, EventCallback, EventEnvelope, MessageEvent, SharedFile, decode_event_envelope,
};
pub use interaction::{
    Action, BlockActions, Container, Interaction, InteractionChannel, InteractionMessage,
    InteractionTeam, InteractionUser, TextObject, decode_interaction,
};

use serde::de::{self, DeserializeOwned};
use serde_json::Value;

/// Why a verified body could not be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The JSON (the body, or the interactivity `payload` field) is not valid or lacks a
    /// required field.
    #[error("invalid {what} JSON: {source}")]
    Json {
        /// Which document was being decoded.
        what: &'static str,
        /// serde_json's description, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// A form-encoded body lacks a field that Slack always sends (or sent it empty).
    #[error("form body has no `{0}` field")]
    MissingField(&'static str),
}

/// Splits an internally tagged JSON object into its `type` and the whole value, so that the
/// caller can pick a variant and keep unknown types instead of failing on them.
fn split_tag<'de, D>(deserializer: D, what: &str) -> Result<(String, Value), D::Error>
where
    D: de::Deserializer<'de>,
{
    let value = <Value as serde::Deserialize>::deserialize(deserializer)?;
    match value.get("type") {
        Some(Value::String(tag)) => Ok((tag.clone(), value)),
        _ => Err(de::Error::custom(format_args!(
            "{what} has no string \"type\" field"
        ))),
    }
}

/// Decodes a variant's body from the value that [`split_tag`] kept.
fn variant<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}

/// First value of `name` in an `application/x-www-form-urlencoded` body, percent-decoded with
/// `+` as space. The first occurrence wins, as with Python's `parse_qs(body)[name][0]`.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    form_urlencoded::parse(body)
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_field_decodes_plus_and_percent() {
        let body = b"a=1&payload=%7B%22t%22%3A%22x+y%20z%E6%95%B0%22%7D&payload=second";
        assert_eq!(
            form_field(body, "payload").as_deref(),
            Some("{\"t\":\"x y z\u{6570}\"}")
        );
        assert_eq!(form_field(body, "a").as_deref(), Some("1"));
        assert_eq!(form_field(body, "missing"), None);
        // A literal `%2B` is a plus sign, not a space.
        assert_eq!(form_field(b"v=1%2B1", "v").as_deref(), Some("1+1"));
    }
}
