//! The registry admins manage: add, replace, list, remove; bad definitions refused.

use serde_json::json;
use workmate_mcp::ServerDef;

use crate::support::World;

#[tokio::test]
async fn servers_are_added_listed_replaced_and_removed() {
    let world = World::new().await;
    let (_, def) = ServerDef::parse(&json!({"url": "https://mcp.example.com/mcp"})).unwrap();
    assert!(
        world
            .manager
            .add(&world.tenant, "wiki", &def, "admin")
            .await
            .unwrap()
    );
    assert!(
        !world
            .manager
            .add(&world.tenant, "wiki", &def, "admin")
            .await
            .unwrap()
    );
    let listed = world.manager.list(&world.tenant).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "wiki");
    assert_eq!(listed[0].state.status, "not started");
    assert_eq!(listed[0].updated_by, "admin");

    let error = world
        .manager
        .add(&world.tenant, "Bad Name", &def, "admin")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("a-z, 0-9"), "{error}");
    let other = workmate_protocol::TenantId::from("globex");
    assert!(
        world.manager.list(&other).await.unwrap().is_empty(),
        "servers are per tenant"
    );

    assert!(
        world
            .manager
            .remove(&world.tenant, "wiki", "admin")
            .await
            .unwrap()
    );
    assert!(
        !world
            .manager
            .remove(&world.tenant, "wiki", "admin")
            .await
            .unwrap()
    );
    assert!(world.manager.list(&world.tenant).await.unwrap().is_empty());
    let stages: Vec<String> = world
        .store
        .audit()
        .recent(&world.tenant, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.stage)
        .collect();
    assert_eq!(
        stages,
        [
            "mcp_server_removed",
            "mcp_server_registered",
            "mcp_server_registered"
        ]
    );
    let error = world
        .manager
        .server_tools(&world.tenant, "wiki", &world.ctx.user_id)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no MCP server named wiki"),
        "{error}"
    );
}
