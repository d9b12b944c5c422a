//! A temporary store and folders per test, the npm servers' paths, and calling a tool by name.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use workmate_mcp::{FolderPolicy, McpManager, McpSettings, ServerDef, ServerStatus};
use workmate_net::NetworkPolicy;
use workmate_protocol::{SessionId, TenantId, UserId};
use workmate_store::{ConnectOptions, Store, Vault};
use workmate_tools::{Root, SANDBOX_UID, ShellSandbox, Tool, ToolContext, ToolRepos, ToolResult};
use workmate_vault::{Keyring, MasterKey};

/// `tests/mcp/` of the workspace: the npm servers' package folder.
pub(crate) fn packages() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp")
        .canonicalize()
        .unwrap();
    let installed = dir.join("node_modules/@modelcontextprotocol/server-everything");
    assert!(
        installed.is_dir(),
        "the MCP test servers are not installed: run `npm ci` in {} (bash .ci/run does)",
        dir.display()
    );
    dir
}

/// The entry script of an npm server package (`server-everything`, `server-filesystem`).
pub(crate) fn script(package: &str) -> String {
    packages()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .display()
        .to_string()
}

/// A test's world: a store, a manager on the real sandbox, a folder a server may use and one it
/// must never see.
pub(crate) struct World {
    _dir: tempfile::TempDir,
    pub(crate) folder: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) tenant: TenantId,
    pub(crate) vault: Vault,
    pub(crate) manager: Arc<McpManager>,
    pub(crate) ctx: ToolContext,
    pub(crate) store: Store,
}

impl World {
    pub(crate) async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o711)).unwrap();
        let folder = base.join("folder");
        let outside = base.join("data");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "the server's secret\n").unwrap();
        let url = format!("sqlite://{}", base.join("store.db").display());
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        // As an operator prepares a folder a server may write in: the sandbox user's.
        if is_root() {
            std::os::unix::fs::chown(&folder, Some(SANDBOX_UID), Some(SANDBOX_UID)).unwrap();
        }
        let keys = Keyring::new(MasterKey::generate("test").unwrap(), Vec::new());
        let vault = Vault::new(store.clone(), Arc::new(keys));
        let settings = McpSettings {
            sandbox: ShellSandbox::default(),
            network: Arc::new(NetworkPolicy::allow_private(["127.0.0.1"]).unwrap()),
            // The operator lets servers see the test folder and the npm packages; the data
            // folder beside them is workmate's own.
            folders: FolderPolicy::new(
                &[folder.clone(), packages()],
                std::slice::from_ref(&outside),
            ),
        };
        let manager =
            Arc::new(McpManager::new(store.clone(), settings, Some(vault.clone())).unwrap());
        let ctx = ToolContext {
            tenant_id: TenantId::from("acme"),
            session_id: SessionId::new(),
            user_id: UserId::from("ada"),
            channel: "slack:C1".into(),
            persona: "cowork".into(),
            roots: vec![Root {
                path: folder.clone(),
                writable: true,
            }],
            cancel: CancellationToken::new(),
            repos: ToolRepos::unavailable(),
            network: false,
        };
        Self {
            _dir: dir,
            folder,
            outside,
            tenant: TenantId::from("acme"),
            vault,
            manager,
            ctx,
            store,
        }
    }

    /// Registers `name` from JSON.
    pub(crate) async fn add(&self, name: &str, json: Value) {
        let (_, def) = ServerDef::parse(&json).unwrap();
        self.manager
            .add(&self.tenant, name, &def, "admin")
            .await
            .unwrap();
    }

    /// The server-everything definition over stdio (its package folder read-only).
    pub(crate) fn everything(&self) -> Value {
        serde_json::json!({
            "command": "node",
            "args": [script("server-everything"), "stdio"],
            "folders": [{"path": packages()}],
        })
    }

    /// The turn's tool called `name`.
    pub(crate) async fn tool(&self, name: &str) -> Arc<dyn Tool> {
        let tools = self
            .manager
            .tools(&self.tenant, &self.ctx.user_id, None)
            .await;
        let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
        tools
            .into_iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name} among {names:?}"))
    }

    /// Calls the tool `name` with `args`.
    pub(crate) async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.tool(name).await.call(&self.ctx, args).await
    }

    /// The status of server `name`.
    pub(crate) async fn status(&self, name: &str) -> ServerStatus {
        self.manager
            .list(&self.tenant)
            .await
            .unwrap()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap()
    }

    /// Waits (up to 20 s) until `ready` holds of server `name`'s status.
    pub(crate) async fn wait_for(
        &self,
        name: &str,
        ready: impl Fn(&ServerStatus) -> bool,
    ) -> ServerStatus {
        let ready = &ready;
        let what = format!("server {name} reaching the state");
        workmate_test_support::eventually_ok(&what, Duration::from_secs(20), || async move {
            let status = self.status(name).await;
            if ready(&status) {
                Ok(status)
            } else {
                Err(status)
            }
        })
        .await
    }
}

/// Whether the tests run as root (then the sandbox runs servers as [`SANDBOX_UID`]).
pub(crate) fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

/// The text of a successful result.
pub(crate) fn text(result: ToolResult) -> String {
    let value = result.unwrap_or_else(|e| panic!("the call failed: {e}"));
    value["result"]
        .as_str()
        .map_or_else(|| value["result"].to_string(), str::to_owned)
}
