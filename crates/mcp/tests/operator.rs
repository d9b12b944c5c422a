//! What an admin may not do with a definition: give a server folders the operator did not
//! allow, or keep a secret in clear in it.

use serde_json::json;
use workmate_mcp::ServerDef;

use crate::support::World;

async fn add(world: &World, name: &str, definition: serde_json::Value) -> Result<bool, String> {
    let (_, def) = ServerDef::parse(&definition).map_err(|e| e.to_string())?;
    world
        .manager
        .add(&world.tenant, name, &def, "admin")
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn folders_outside_the_operators_roots_are_refused_at_registration() {
    let world = World::new().await;
    for (path, why) in [
        (world.outside.clone(), "outside the folders"),
        (std::path::PathBuf::from("/"), "outside the folders"),
        (std::path::PathBuf::from("/etc"), "outside the folders"),
        (world.folder.join(".."), "outside the folders"),
    ] {
        let error = add(
            &world,
            "leak",
            json!({"command": "sh", "args": ["-c", "exit 1"], "folders": [{"path": path, "writable": true}]}),
        )
        .await
        .unwrap_err();
        assert!(error.contains(why), "{}: {error}", path.display());
    }
    assert!(world.manager.list(&world.tenant).await.unwrap().is_empty());
    // A folder under a root is admitted, stored as its real path.
    add(
        &world,
        "files",
        json!({"command": "node", "folders": [{"path": world.folder}]}),
    )
    .await
    .unwrap();
    let listed = world.status("files").await;
    assert_eq!(
        listed.definition.folders[0].path,
        world.folder.canonicalize().unwrap()
    );
}

#[tokio::test]
async fn literal_secrets_move_into_the_vault_and_are_never_shown() {
    let world = World::new().await;
    add(
        &world,
        "github",
        json!({"command": "node", "args": ["server.js"],
               "env": {"GITHUB_TOKEN": "ghp_literal", "REF": "${vault:shared}"}}),
    )
    .await
    .unwrap();
    add(
        &world,
        "wiki",
        json!({"url": "https://mcp.example.com/mcp", "headers": {"X-Api-Key": "k-123"},
               "oauth": {"client_id": "wm", "client_secret": "cs-456"}}),
    )
    .await
    .unwrap();
    let stored: Vec<String> = world
        .store
        .mcp_servers()
        .list(&world.tenant)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.definition.to_string())
        .collect();
    for literal in ["ghp_literal", "k-123", "cs-456"] {
        assert!(
            stored.iter().all(|d| !d.contains(literal)),
            "{literal} stored: {stored:?}"
        );
    }
    assert!(stored.iter().any(|d| d.contains("${vault:shared}")));
    let kept = || async {
        let kept = world
            .vault
            .get(&world.tenant, None, "mcp-server/github/env/github_token")
            .await
            .unwrap()
            .unwrap();
        secrecy::ExposeSecret::expose_secret(&kept).to_owned()
    };
    assert_eq!(kept().await, "ghp_literal");
    // The definition as listed (`***`), sent back unchanged, keeps the secret.
    let listed = world.status("github").await.definition;
    world
        .manager
        .add(&world.tenant, "github", &listed, "admin")
        .await
        .unwrap();
    assert_eq!(kept().await, "ghp_literal");

    let admin_view =
        serde_json::to_string(&world.manager.list(&world.tenant).await.unwrap()).unwrap();
    assert!(
        admin_view.contains("GITHUB_TOKEN") && admin_view.contains("***"),
        "{admin_view}"
    );
    assert!(!admin_view.contains("vault:"), "{admin_view}");
    let members: Vec<_> = world
        .manager
        .list(&world.tenant)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.for_members())
        .collect();
    let member_view = serde_json::to_string(&members).unwrap();
    for hidden in ["GITHUB_TOKEN", "X-Api-Key", "client_secret", "***"] {
        assert!(!member_view.contains(hidden), "{hidden}: {member_view}");
    }
}

#[tokio::test]
async fn an_http_server_on_the_host_is_refused_unless_the_operator_allowed_it() {
    let world = World::new().await;
    // The world's operator allowed 127.0.0.1; localhost by name and the metadata address not.
    for url in [
        "http://169.254.169.254/mcp",
        "http://localhost:1/mcp",
        "http://10.0.0.1/mcp",
    ] {
        let error = add(&world, "inner", json!({"url": url})).await.unwrap_err();
        assert!(
            error.contains("refusing") || error.contains("only sent over https"),
            "{url}: {error}"
        );
    }
}
