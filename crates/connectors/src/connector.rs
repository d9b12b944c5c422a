//! What a connector implements: its descriptor and the calls of its tools.

use std::fmt;

use serde_json::Value;
use workmate_tools::{ToolError, ToolFuture};

use crate::{Credentials, Descriptor, Http};

/// One connected system.
pub trait Connector: Send + Sync + fmt::Debug {
    /// What it is and which tools it has.
    fn descriptor(&self) -> &Descriptor;

    /// Runs the tool `tool` with `arguments` as the owner of `credentials`.
    fn call<'a>(
        &'a self,
        http: &'a Http,
        credentials: &'a Credentials,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a>;
}

/// A path segment, percent-encoded.
pub(crate) fn segment(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// `base` without a trailing `/`.
pub(crate) fn trimmed(base: &str) -> &str {
    base.trim_end_matches('/')
}

/// `text` as a query-string value, percent-encoded.
pub(crate) fn query(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// How many results a search returns: `asked`, else 20, and never more than 50.
pub(crate) fn limit(asked: Option<u32>) -> u32 {
    asked.unwrap_or(20).clamp(1, 50)
}

/// The credential field `key` of `connector`, or the error the model sees (which says how to
/// connect again).
pub(crate) fn field<'c>(
    credentials: &'c Credentials,
    connector: &str,
    key: &str,
) -> Result<&'c str, ToolError> {
    credentials.require(connector, key).map_err(ToolError::new)
}

/// Each element of the array `items` (none when it is not one) through `shape`.
pub(crate) fn each(items: &Value, shape: impl Fn(&Value) -> Value) -> Vec<Value> {
    items
        .as_array()
        .map(|items| items.iter().map(shape).collect())
        .unwrap_or_default()
}

/// The error for a tool name a connector does not have.
pub(crate) fn no_tool(system: &str, tool: &str) -> ToolError {
    ToolError::new(format!("{system} has no tool {tool}"))
}
