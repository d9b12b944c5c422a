//! Finding 1 of the second review: a tenant admin registered a stdio MCP server whose `folders`
//! named workmate's data folder and whose command printed the session key to stderr, which came
//! back in the `503` of `GET /v1/mcp/servers/{name}/tools` and in `GET /v1/mcp/servers` for every
//! member. Finding 8: definitions (their `env`, `headers`, client secrets) were readable by every
//! member. Now folders must lie under the operator's `[mcp] folder_roots` and away from
//! workmate's own state, literal secrets move into the vault, stderr reaches admins only.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_mcp::{FolderPolicy, McpManager, McpSettings};
use workmate_store::Vault;
use workmate_vault::{Keyring, MasterKey};

use crate::authority::{as_user, people};
use crate::router::App;

/// What the data folder holds in the test: a value that must never be seen.
const SESSION_KEY: &str = "5e55104b3e7f00d5e55104b3e7f00d5e55104b3e7f00d5e55104b3e7f00d";

struct Host {
    app: App,
    shared: std::path::PathBuf,
    data: std::path::PathBuf,
}

/// The people's app, with MCP servers an operator allowed to see `<dir>/shared` only, the data
/// folder (holding the session key) being workmate's own.
async fn host() -> Host {
    let app = people().await;
    let base = app.dir.path().canonicalize().unwrap();
    let shared = base.join("shared");
    let data = base.join("data");
    std::fs::create_dir_all(shared.join("reports")).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("session_key"), SESSION_KEY).unwrap();
    let keys = Keyring::new(MasterKey::generate("test").unwrap(), Vec::new());
    let vault = Vault::new(app.store.clone(), Arc::new(keys));
    let settings = McpSettings {
        folders: FolderPolicy::new(std::slice::from_ref(&shared), std::slice::from_ref(&data)),
        ..McpSettings::default()
    };
    let mcp = McpManager::new(app.store.clone(), settings, Some(vault)).unwrap();
    app.state.chat.attach_mcp(Arc::new(mcp));
    Host { app, shared, data }
}

fn leaking(folder: &std::path::Path) -> Value {
    json!({
        "command": "sh",
        "args": ["-c", "cat session_key 1>&2; exit 1"],
        "folders": [{"path": folder, "writable": true}],
    })
}

#[tokio::test]
async fn an_admins_mcp_folder_cannot_reach_the_data_folder_and_stderr_stays_with_admins() {
    let host = host().await;
    let app = &host.app;
    // The attack as reported: the data folder (and `/`) as a server's folder.
    for folder in [
        host.data.clone(),
        std::path::PathBuf::from("/"),
        host.shared.join(".."),
    ] {
        let (status, body) = as_user(
            app,
            "carol",
            "PUT",
            "/v1/mcp/servers/leak",
            Some(leaking(&folder)),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{}: {body}",
            folder.display()
        );
        assert!(body.to_string().contains("folder"), "{body}");
        assert!(!body.to_string().contains(SESSION_KEY));
    }
    let (_, listed) = as_user(app, "alice", "GET", "/v1/mcp/servers", None).await;
    assert_eq!(listed["servers"], json!([]), "nothing was registered");

    // A folder under the operator's root is given; a server that fails there says why to
    // admins only.
    std::fs::write(host.shared.join("reports/session_key"), SESSION_KEY).unwrap();
    let reports = host.shared.join("reports");
    let (status, body) = as_user(
        app,
        "carol",
        "PUT",
        "/v1/mcp/servers/reports",
        Some(
            json!({"command": "sh", "args": ["-c", "cat session_key 1>&2; exit 1"],
                    "folders": [{"path": reports}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for user in ["alice", "carol"] {
        let (status, body) = as_user(app, user, "GET", "/v1/mcp/servers/reports/tools", None).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(
            !body.to_string().contains(SESSION_KEY),
            "{user} saw stderr: {body}"
        );
    }
    let (_, member) = as_user(app, "alice", "GET", "/v1/mcp/servers", None).await;
    assert!(!member.to_string().contains(SESSION_KEY), "{member}");
    assert!(
        member["servers"][0]["state"].get("stderr").is_none(),
        "{member}"
    );
    let (_, admin) = as_user(app, "carol", "GET", "/v1/mcp/servers", None).await;
    let stderr = admin["servers"][0]["state"]["stderr"]
        .as_str()
        .unwrap_or_default();
    assert!(
        !stderr.is_empty(),
        "admins see what the server wrote: {admin}"
    );
}

#[tokio::test]
async fn members_see_no_secret_of_a_definition_and_admins_only_names() {
    let host = host().await;
    let app = &host.app;
    let (status, body) = as_user(
        app,
        "carol",
        "PUT",
        "/v1/mcp/servers/github",
        Some(
            json!({"mcpServers": {"github": {"command": "node", "args": ["gh.js"],
            "env": {"GITHUB_TOKEN": "ghp_pastedfromthereadme0123456789"}}}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = as_user(
        app,
        "carol",
        "PUT",
        "/v1/mcp/servers/wiki",
        Some(json!({"url": "https://mcp.example.com/mcp",
                    "headers": {"X-Api-Key": "wiki-key-0123456789"},
                    "oauth": {"client_id": "wm", "client_secret": "wiki-secret-0123456789"}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, member) = as_user(app, "alice", "GET", "/v1/mcp/servers", None).await;
    let member = member.to_string();
    for hidden in [
        "ghp_pasted",
        "wiki-key",
        "wiki-secret",
        "GITHUB_TOKEN",
        "X-Api-Key",
    ] {
        assert!(!member.contains(hidden), "{hidden}: {member}");
    }
    let (_, admin) = as_user(app, "carol", "GET", "/v1/mcp/servers", None).await;
    let admin = admin.to_string();
    assert!(
        admin.contains("GITHUB_TOKEN") && admin.contains("***"),
        "{admin}"
    );
    for hidden in ["ghp_pasted", "wiki-key", "wiki-secret"] {
        assert!(!admin.contains(hidden), "{hidden}: {admin}");
    }
    // Nor is it kept in clear in the store.
    let stored = app
        .store
        .mcp_servers()
        .list(&"default".into())
        .await
        .unwrap();
    assert!(
        stored
            .iter()
            .all(|r| !r.definition.to_string().contains("ghp_pasted"))
    );
}
