//! A server's tool as one of workmate's: named `mcp__<server>__<tool>`, asking for approval
//! unless the admin listed it in `read_only_tools`.
//!
//! Invariants: the name has only `[A-Za-z0-9_-]` and at most 64 characters; a result reaches the
//! model as text (non-text blocks named by their kind), bounded; a tool error is a call error.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;
use workmate_protocol::ToolSpec;
use workmate_tools::{RiskLevel, Tool, ToolContext, ToolError, ToolFuture, ToolMetadata};

use crate::server::Server;

/// The category of every MCP tool.
pub const CATEGORY: &str = "mcp";
/// The longest a tool name may be (what model APIs accept).
const MAX_NAME_LEN: usize = 64;
/// The longest description passed on.
const MAX_DESCRIPTION: usize = 1_024;
/// The most text of one result passed on.
const MAX_RESULT_CHARS: usize = 50_000;

/// `mcp__<server>__<tool>`, with other characters than `[A-Za-z0-9_-]` as `_`, cut to 64.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME_LEN)
        .collect()
}

/// The metadata of an MCP tool: a read when the admin marked it so, else an external call that
/// asks.
pub fn metadata(read_only: bool) -> ToolMetadata {
    if read_only {
        ToolMetadata::read(CATEGORY)
    } else {
        ToolMetadata {
            risk_level: RiskLevel::High,
            requires_approval: true,
            category: CATEGORY.to_owned(),
            target_arg: None,
            idempotent: false,
        }
    }
}

/// One tool of one server.
#[derive(Debug)]
pub(crate) struct McpTool {
    spec: ToolSpec,
    metadata: ToolMetadata,
    /// The name the server knows it by.
    remote: String,
    server: Arc<Server>,
}

impl McpTool {
    pub(crate) fn new(server: Arc<Server>, tool: &rmcp::model::Tool) -> Self {
        let description: String = tool
            .description
            .as_deref()
            .unwrap_or_default()
            .chars()
            .take(MAX_DESCRIPTION)
            .collect();
        let parameters = serde_json::Value::Object(tool.input_schema.as_ref().clone());
        let read_only = server.def.read_only_tools.contains(tool.name.as_ref());
        Self {
            spec: ToolSpec {
                name: tool_name(&server.name, &tool.name),
                description: format!("[{} MCP server] {description}", server.name),
                parameters,
            },
            metadata: metadata(read_only),
            remote: tool.name.to_string(),
            server,
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        Some(self.metadata.clone())
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments = match arguments {
                serde_json::Value::Object(map) => map,
                serde_json::Value::Null => serde_json::Map::new(),
                other => {
                    return Err(ToolError::new(format!(
                        "invalid arguments for {}: expected a JSON object, got {other}",
                        self.spec.name
                    )));
                }
            };
            let call = self.server.call(&self.remote, arguments);
            let result = tokio::select! {
                result = call => result,
                () = ctx.cancel.cancelled() => return Err(ToolError::new("interrupted by user")),
            };
            let failed = |e: &dyn std::fmt::Display| {
                ToolError::new(format!("MCP server {}: {e}", self.server.name))
            };
            let result = result.map_err(|e| failed(&e))?;
            flatten(&result).map_err(|e| failed(&e))
        })
    }
}

/// A result as the model sees it: text blocks joined by newlines, other blocks by kind,
/// structured content when there is no text; an error result as a call error.
pub(crate) fn flatten(result: &CallToolResult) -> Result<serde_json::Value, ToolError> {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(_) => "[image]".to_owned(),
            ContentBlock::Audio(_) => "[audio]".to_owned(),
            ContentBlock::Resource(_) => "[resource]".to_owned(),
            ContentBlock::ResourceLink(r) => format!("[resource link: {}]", r.uri),
            _ => "[content]".to_owned(),
        })
        .collect();
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        let text = if text.trim().is_empty() {
            "MCP tool error".to_owned()
        } else {
            text
        };
        return Err(ToolError::new(bounded(&text)));
    }
    let mut value = json!({ "result": bounded(&text) });
    if let Some(structured) = &result.structured_content
        && text.trim().is_empty()
    {
        value = json!({ "result": structured });
    }
    Ok(value)
}

fn bounded(text: &str) -> String {
    if text.chars().count() <= MAX_RESULT_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(MAX_RESULT_CHARS).collect();
    format!("{kept}\n[cut: the result was longer than {MAX_RESULT_CHARS} characters]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_and_bounded() {
        assert_eq!(tool_name("files", "read_file"), "mcp__files__read_file");
        assert_eq!(
            tool_name("files", "read.file v2"),
            "mcp__files__read_file_v2"
        );
        assert_eq!(tool_name("s", &"x".repeat(100)).len(), 64);
    }

    #[test]
    fn only_read_only_tools_skip_approval() {
        assert!(!metadata(true).requires_approval);
        let asks = metadata(false);
        assert!(asks.requires_approval && asks.category == "mcp" && asks.target_arg.is_none());
    }
}
