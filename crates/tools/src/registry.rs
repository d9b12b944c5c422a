//! The tools a session can call, by name.
//!
//! Invariants: names are unique; registering a second tool under a taken name replaces the first
//! (the server's own set is assembled deterministically), while the tools a turn adds from its
//! sources ([`ToolRegistry::extended`]) never replace one: a taken name keeps its tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use workmate_protocol::ToolSpec;

use crate::{Tool, ToolMetadata};

/// A set of tools.
#[derive(Clone, Debug, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    /// Every tool's spec, by name: built when the set changes, not on every model call.
    specs: Vec<ToolSpec>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool (replacing one of the same name).
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
        self.specs = specs_of(&self.tools);
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// The tool's metadata; `None` when the tool is unknown or declares none.
    pub fn metadata(&self, name: &str) -> Option<ToolMetadata> {
        self.tools.get(name).and_then(|t| t.metadata())
    }

    /// Every tool's spec, by name.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The tools' names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// This registry plus `extra`, skipping any whose name is taken (by this registry or an
    /// earlier extra); the names skipped are returned beside it.
    pub fn extended(&self, extra: Vec<Arc<dyn Tool>>) -> (Self, Vec<String>) {
        let mut tools = self.tools.clone();
        let mut skipped = Vec::new();
        for tool in extra {
            match tools.entry(tool.spec().name) {
                std::collections::btree_map::Entry::Occupied(taken) => {
                    skipped.push(taken.key().clone());
                }
                std::collections::btree_map::Entry::Vacant(free) => {
                    free.insert(tool);
                }
            }
        }
        let specs = specs_of(&tools);
        (Self { tools, specs }, skipped)
    }

    /// A registry holding only the tools `keep` accepts (e.g. the read-only set for `explore`).
    pub fn filtered(&self, keep: impl Fn(&str, Option<&ToolMetadata>) -> bool) -> Self {
        let tools = self
            .tools
            .iter()
            .filter(|(name, tool)| keep(name, tool.metadata().as_ref()))
            .map(|(name, tool)| (name.clone(), Arc::clone(tool)))
            .collect();
        let specs = specs_of(&tools);
        Self { tools, specs }
    }
}

fn specs_of(tools: &BTreeMap<String, Arc<dyn Tool>>) -> Vec<ToolSpec> {
    tools.values().map(|t| t.spec()).collect()
}
