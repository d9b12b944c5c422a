//! The tenant's MCP tools as a source of a turn's tools (of servers people sign in to, only
//! those the requester signed in to).

use std::sync::Arc;

use workmate_tools::{ToolMetadata, ToolScope, ToolSource, ToolsFuture};

use crate::McpManager;

/// Offers every turn its tenant's MCP tools.
#[derive(Clone, Debug)]
pub struct McpSource(pub Arc<McpManager>);

impl ToolSource for McpSource {
    fn tools<'a>(&'a self, scope: ToolScope<'a>) -> ToolsFuture<'a> {
        Box::pin(
            self.0
                .tools(scope.tenant_id, scope.user_id, scope.mcp_servers),
        )
    }

    /// Without a tenant the admin's `read_only_tools` are unknown: every MCP tool counts as one
    /// that asks, so checks made outside a turn (separation of duties) are never weaker.
    fn metadata(&self, name: &str) -> Option<ToolMetadata> {
        name.starts_with("mcp__")
            .then(|| crate::tool::metadata(false))
    }
}
