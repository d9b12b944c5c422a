//! The explicit memory tools, per tenant and per person.

use serde_json::json;
use workmate_protocol::{TenantId, UserId};
use workmate_store::{Memory, MemoryScope};

use crate::support::{World, err};

/// The memory `id` as the store holds it.
async fn stored_memory(world: &World, id: &str) -> Memory {
    let memories = world.store.memories();
    let found = memories.get(&world.ctx.tenant_id, id).await.unwrap();
    found.unwrap_or_else(|| panic!("memory {id} is not stored"))
}

#[tokio::test]
async fn remember_read_update_forget() {
    let world = World::new().await;
    let saved = world
        .call(
            "remember",
            json!({"content": "The build uses cargo xtask.", "summary": "build"}),
        )
        .await
        .unwrap();
    let id = saved["id"].as_str().unwrap().to_owned();
    assert_eq!(
        saved,
        json!({"id": id, "scope": "workspace", "saved": true})
    );

    let stored = stored_memory(&world, &id).await;
    assert_eq!(stored.scope, MemoryScope::Workspace);
    assert_eq!(
        stored.workspace.as_deref(),
        Some(world.root.to_str().unwrap())
    );
    assert_eq!(stored.summary.as_deref(), Some("build"));

    let read = world
        .call("memory_read", json!({"memory_ids": [id, "nope"]}))
        .await
        .unwrap();
    assert_eq!(
        read,
        json!({
            "memories": [{"id": id, "scope": "workspace", "content": "The build uses cargo xtask."}],
            "missing": ["nope"],
        })
    );

    let updated = world
        .call(
            "memory_update",
            json!({"memory_id": id, "content": "The build uses make."}),
        )
        .await
        .unwrap();
    assert_eq!(updated, json!({"updated": true, "id": id}));
    let stored = stored_memory(&world, &id).await;
    assert_eq!(stored.content, "The build uses make.");
    assert_eq!(
        stored.summary.as_deref(),
        Some("build"),
        "an empty summary keeps the old one"
    );

    let unknown = err(world
        .call(
            "memory_update",
            json!({"memory_id": "nope", "content": "x"}),
        )
        .await);
    assert!(unknown.contains("nope"), "{unknown}");

    let forgot = world
        .call("memory_forget", json!({"memory_id": id}))
        .await
        .unwrap();
    assert_eq!(forgot, json!({"deleted": true, "id": id}));
    let again = world
        .call("memory_forget", json!({"memory_id": id}))
        .await
        .unwrap();
    assert_eq!(again, json!({"deleted": false, "id": id}));
    let read = world
        .call("memory_read", json!({"memory_ids": [id]}))
        .await
        .unwrap();
    assert_eq!(read, json!({"memories": [], "missing": [id]}));
}

#[tokio::test]
async fn scopes_global_and_fallbacks() {
    let world = World::new().await;
    let global = world
        .call(
            "remember",
            json!({"content": "Ada prefers short answers.", "scope": "global"}),
        )
        .await
        .unwrap();
    assert_eq!(global["scope"], "global");
    let stored = stored_memory(&world, global["id"].as_str().unwrap()).await;
    assert_eq!(
        (stored.owner, stored.workspace),
        (Some(UserId::from("ada")), None)
    );

    for scope in ["session", "bogus"] {
        let saved = world
            .call("remember", json!({"content": "x", "scope": scope}))
            .await
            .unwrap();
        assert_eq!(saved["scope"], "workspace", "{scope}");
    }
    err(world.call("remember", json!({"content": "   "})).await);
    err(world
        .call("remember", json!({"content": "x".repeat(20_001)}))
        .await);
}

#[tokio::test]
async fn memories_stay_within_the_tenant_and_the_person() {
    let world = World::new().await;
    let personal = world
        .call(
            "remember",
            json!({"content": "Ada's salary is private.", "scope": "global"}),
        )
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shared = world
        .call("remember", json!({"content": "Deploys on Fridays."}))
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A coworker in the same tenant sees the workspace fact, not Ada's personal one.
    let mut bob = world.ctx.clone();
    bob.user_id = UserId::from("bob");
    let read = world
        .call_with(
            &bob,
            "memory_read",
            json!({"memory_ids": [personal, shared]}),
        )
        .await
        .unwrap();
    assert_eq!(read["missing"], json!([personal]));
    assert_eq!(read["memories"][0]["id"], shared);
    err(world
        .call_with(
            &bob,
            "memory_update",
            json!({"memory_id": personal, "content": "x"}),
        )
        .await);
    let forgot = world
        .call_with(&bob, "memory_forget", json!({"memory_id": personal}))
        .await;
    assert_eq!(forgot.unwrap()["deleted"], false);

    // Another tenant sees neither.
    let mut other = world.ctx.clone();
    other.tenant_id = TenantId::from("globex");
    let read = world
        .call_with(
            &other,
            "memory_read",
            json!({"memory_ids": [personal, shared]}),
        )
        .await
        .unwrap();
    assert_eq!(read["memories"], json!([]));
    let forgot = world
        .call_with(&other, "memory_forget", json!({"memory_id": shared}))
        .await;
    assert_eq!(forgot.unwrap()["deleted"], false);

    let still = world
        .call("memory_read", json!({"memory_ids": [personal, shared]}))
        .await
        .unwrap();
    assert_eq!(still["memories"].as_array().unwrap().len(), 2);
}
