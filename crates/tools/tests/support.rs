//! A temporary root and store per test (behind the tools' repositories as the engine wires them),
//! and a helper to call a tool by name.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use workmate_protocol::{SessionId, TenantId, UserId};
use workmate_store::{ConnectOptions, Store};
use workmate_tools::{
    BuiltinOptions, Root, ToolContext, ToolRegistry, ToolResult, builtin_registry,
};

/// A test's world: a temp folder holding `root/` (the session's writable root), `outside/` (a
/// sibling the session must never reach) and the store's database.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) ctx: ToolContext,
    pub(crate) registry: ToolRegistry,
    /// The store behind `ctx.repos`, for setting up and checking state.
    pub(crate) store: Store,
}

impl World {
    pub(crate) async fn new() -> Self {
        Self::with_options(&BuiltinOptions::default()).await
    }

    pub(crate) async fn with_options(options: &BuiltinOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        // As in a real workspaces folder: a root server's sandbox user must be able to reach the
        // session's folder (and nothing else: the folder cannot be listed).
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o711)).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
        let url = format!("sqlite://{}", base.join("store.db").display());
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let ctx = ToolContext {
            tenant_id: TenantId::from("acme"),
            session_id: SessionId::new(),
            user_id: UserId::from("ada"),
            channel: "slack:C1".into(),
            persona: "cowork".into(),
            roots: vec![Root {
                path: root.clone(),
                writable: true,
            }],
            cancel: CancellationToken::new(),
            repos: workmate_engine::tool_repos::tool_repos(&store),
            network: false,
        };
        Self {
            _dir: dir,
            root,
            outside,
            ctx,
            registry: builtin_registry(options),
            store,
        }
    }

    /// Calls the built-in `name` with this world's context.
    pub(crate) async fn call(&self, name: &str, arguments: Value) -> ToolResult {
        self.call_with(&self.ctx, name, arguments).await
    }

    /// Calls the built-in `name` with another context (another user, other roots).
    pub(crate) async fn call_with(&self, ctx: &ToolContext, name: &str, args: Value) -> ToolResult {
        let tool = self
            .registry
            .get(name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        tool.call(ctx, args).await
    }

    /// Writes a file under the root.
    pub(crate) fn write(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root.join(relative)).unwrap()
    }
}

/// The error message of a call that must fail.
pub(crate) fn err(result: ToolResult) -> String {
    match result {
        Ok(value) => panic!("expected an error, got {value}"),
        Err(e) => e.message,
    }
}

pub(crate) fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}
