//! What a connector implements: its descriptor and the calls of its tools.

use std::fmt;

use serde_json::Value;
use workmate_tools::ToolFuture;

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
