//! The hub's tool sources: what adds a tenant's MCP servers, a person's connectors and the chat
//! platforms to a turn's tools.
//!
//! Invariants: sources are added before sessions run and never removed; a turn reads the set once,
//! when it starts, so a turn's tools do not change under it; a turn whose sources add nothing
//! shares the server's registry instead of copying it.

use std::sync::{Arc, RwLock};

use workmate_tools::{ToolMetadata, ToolRegistry, ToolScope, ToolSource};

/// The sources installed on a hub.
#[derive(Debug, Default)]
pub(crate) struct ToolSources(RwLock<Arc<[Arc<dyn ToolSource>]>>);

impl ToolSources {
    /// Adds `source` after the others.
    pub(crate) fn add(&self, source: Arc<dyn ToolSource>) {
        let mut slot = self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all: Vec<_> = slot.iter().cloned().collect();
        all.push(source);
        *slot = all.into();
    }

    fn all(&self) -> Arc<[Arc<dyn ToolSource>]> {
        Arc::clone(
            &self
                .0
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// `base` plus every source's tools for `scope`.
    pub(crate) async fn registry(
        &self,
        base: &Arc<ToolRegistry>,
        scope: ToolScope<'_>,
    ) -> Arc<ToolRegistry> {
        let sources = self.all();
        let mut extra = Vec::new();
        for source in sources.iter() {
            extra.extend(source.tools(scope).await);
        }
        if extra.is_empty() {
            return Arc::clone(base);
        }
        let (registry, skipped) = base.extended(extra);
        if !skipped.is_empty() {
            tracing::warn!(tenant = %scope.tenant_id, ?skipped, "Tools of a source were dropped: a tool of the same name exists.");
        }
        Arc::new(registry)
    }

    /// What a source declares about the tool `name`, when one provides it.
    pub(crate) fn metadata(&self, name: &str) -> Option<ToolMetadata> {
        self.all().iter().find_map(|s| s.metadata(name))
    }
}
