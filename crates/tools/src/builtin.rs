//! The built-in tool set.
//!
//! Invariant: every built-in declares its metadata, so none falls back to "unknown, high risk" by
//! accident, and the set is assembled in one place.

use std::sync::Arc;

use crate::shell::sandbox::ShellSandbox;
use crate::web_fetch::WebFetch;
use crate::{
    ApplyPatch, Grep, ListFiles, LoadSkill, MemoryForget, MemoryRead, MemoryUpdate, ReadFile,
    Remember, ReplaceInFile, RunShell, SaveSkill, ToolRegistry, WriteFile, scheduling_tools,
    wake_tools,
};

/// What the built-ins are configured with.
#[derive(Clone, Debug, Default)]
pub struct BuiltinOptions {
    /// The operator's network policy: what `web_fetch` may reach besides public addresses.
    pub network: Arc<workmate_net::NetworkPolicy>,
    /// How `run_shell` isolates its commands (default: namespaces).
    pub shell_sandbox: ShellSandbox,
}

/// A registry with every built-in tool: files, shell, web fetch, memory, scheduling and self-wake.
pub fn builtin_registry(options: &BuiltinOptions) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(ReadFile));
    registry.register(Arc::new(ListFiles));
    registry.register(Arc::new(Grep));
    registry.register(Arc::new(WriteFile));
    registry.register(Arc::new(ReplaceInFile));
    registry.register(Arc::new(ApplyPatch));
    registry.register(Arc::new(RunShell::new(options.shell_sandbox.clone())));
    registry.register(Arc::new(WebFetch::new(Arc::clone(&options.network))));
    registry.register(Arc::new(Remember));
    registry.register(Arc::new(MemoryRead));
    registry.register(Arc::new(MemoryUpdate));
    registry.register(Arc::new(MemoryForget));
    registry.register(Arc::new(LoadSkill));
    registry.register(Arc::new(SaveSkill));
    for tool in scheduling_tools().into_iter().chain(wake_tools()) {
        registry.register(tool);
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RiskLevel;

    #[test]
    fn every_builtin_is_registered_with_metadata() {
        let registry = builtin_registry(&BuiltinOptions::default());
        assert_eq!(
            registry.names(),
            [
                "apply_patch",
                "create_scheduled_task",
                "delete_scheduled_task",
                "grep",
                "list_files",
                "list_scheduled_tasks",
                "load_skill",
                "memory_forget",
                "memory_read",
                "memory_update",
                "read_file",
                "remember",
                "replace_in_file",
                "run_shell",
                "save_skill",
                "sleep_until",
                "update_scheduled_task",
                "wake_on",
                "wake_on_event",
                "web_fetch",
                "write_file",
            ]
        );
        for name in registry.names() {
            let metadata = registry.metadata(name).unwrap();
            let concurrent = matches!(
                name,
                "read_file"
                    | "list_files"
                    | "grep"
                    | "memory_read"
                    | "list_scheduled_tasks"
                    | "load_skill"
                    | "sleep_until"
                    | "wake_on"
                    | "wake_on_event"
            );
            assert_eq!(metadata.is_concurrency_safe(), concurrent, "{name}");
        }
        let shell = registry.metadata("run_shell").unwrap();
        assert_eq!(shell.risk_level, RiskLevel::High);
        assert_eq!(shell.target_arg.as_deref(), Some("command"));
        assert_eq!(
            registry
                .metadata("apply_patch")
                .unwrap()
                .target_arg
                .as_deref(),
            Some("patch")
        );
        assert_eq!(
            registry
                .metadata("write_file")
                .unwrap()
                .target_arg
                .as_deref(),
            Some("path")
        );
        let web = registry.metadata("web_fetch").unwrap();
        assert!(web.idempotent);
        assert_eq!(web.target_arg.as_deref(), Some("url"));

        for name in [
            "create_scheduled_task",
            "update_scheduled_task",
            "delete_scheduled_task",
        ] {
            let metadata = registry.metadata(name).unwrap();
            assert_eq!(metadata.risk_level, RiskLevel::Medium, "{name}");
            assert!(metadata.requires_approval, "{name}");
            assert!(!metadata.idempotent, "{name}");
            assert_eq!(metadata.target_arg, None, "{name}");
            assert_eq!(metadata.category, "automation", "{name}");
        }
        let list = registry.metadata("list_scheduled_tasks").unwrap();
        assert_eq!(list, crate::ToolMetadata::read("automation"));
        for name in ["sleep_until", "wake_on", "wake_on_event"] {
            let metadata = registry.metadata(name).unwrap();
            assert_eq!(metadata.risk_level, RiskLevel::Low, "{name}");
            assert!(!metadata.requires_approval, "{name}");
            assert!(
                !metadata.idempotent,
                "a second call sets a second wake: {name}"
            );
            assert_eq!(metadata.category, "wake", "{name}");
        }
    }

    #[test]
    fn every_spec_is_an_object_schema_without_extras() {
        for spec in builtin_registry(&BuiltinOptions::default()).specs() {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.parameters["additionalProperties"], false,
                "{}",
                spec.name
            );
            assert!(!spec.description.is_empty());
        }
    }
}
