//! server-everything over stdio, in the exec sandbox: tools listed and called, errors, timeouts,
//! a scrubbed environment, and a crash restarted with backoff.

use serde_json::json;

use crate::support::{World, text};

#[tokio::test]
async fn its_tools_are_listed_with_approval_and_called() {
    let world = World::new().await;
    let mut def = world.everything();
    def["read_only_tools"] = json!(["get-sum"]);
    world.add("everything", def).await;

    let tools = world
        .manager
        .tools(&world.tenant, &world.ctx.user_id, None)
        .await;
    let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
    assert!(
        names.contains(&"mcp__everything__echo".to_owned()),
        "{names:?}"
    );
    let echo = world.tool("mcp__everything__echo").await;
    let meta = echo.metadata().unwrap();
    assert!(meta.requires_approval, "tools ask unless marked read-only");
    assert_eq!(meta.category, "mcp");
    let sum = world.tool("mcp__everything__get-sum").await;
    assert!(
        !sum.metadata().unwrap().requires_approval,
        "marked read-only by the admin"
    );
    assert!(echo.spec().parameters["properties"]["message"].is_object());

    let echoed = text(
        world
            .call(
                "mcp__everything__echo",
                json!({"message": "hello from workmate"}),
            )
            .await,
    );
    assert!(echoed.contains("hello from workmate"), "{echoed}");
    let summed = text(
        world
            .call("mcp__everything__get-sum", json!({"a": 2, "b": 3}))
            .await,
    );
    assert!(summed.contains('5'), "{summed}");

    let listed = world
        .manager
        .server_tools(&world.tenant, "everything", &world.ctx.user_id)
        .await
        .unwrap();
    let sum = listed.iter().find(|t| t.remote == "get-sum").unwrap();
    assert!(sum.read_only && sum.offered);
}

#[tokio::test]
async fn bad_arguments_and_slow_tools_fail_with_the_reason() {
    let world = World::new().await;
    let mut def = world.everything();
    def["timeout_seconds"] = json!(1);
    world.add("everything", def).await;

    let error = world
        .call("mcp__everything__get-sum", json!({"a": "two", "b": 3}))
        .await
        .unwrap_err();
    assert!(
        error.message.starts_with("MCP server everything"),
        "{error}"
    );
    let error = world
        .call("mcp__everything__echo", json!("not an object"))
        .await
        .unwrap_err();
    assert!(error.message.contains("expected a JSON object"), "{error}");

    let error = world
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
        )
        .await
        .unwrap_err();
    assert!(
        error.message.contains("did not answer within 1 s"),
        "{error}"
    );
    // The server is still usable after a timed-out call.
    let echoed = text(
        world
            .call("mcp__everything__echo", json!({"message": "still here"}))
            .await,
    );
    assert!(echoed.contains("still here"));
}

#[tokio::test]
async fn the_environment_is_only_what_the_definition_gives() {
    let world = World::new().await;
    let mut def = world.everything();
    def["env"] = json!({"GREETING": "hej"});
    world.add("everything", def).await;
    let env = text(world.call("mcp__everything__get-env", json!({})).await);
    assert!(env.contains("GREETING") && env.contains("hej"), "{env}");
    for leaked in ["CARGO", "RUST", "WORKMATE"] {
        assert!(
            !env.contains(leaked),
            "the server saw the host's {leaked}… variables: {env}"
        );
    }
}

#[tokio::test]
async fn a_crashed_server_is_restarted_with_backoff() {
    let world = World::new().await;
    world.add("everything", world.everything()).await;
    text(
        world
            .call("mcp__everything__echo", json!({"message": "before"}))
            .await,
    );
    let up = world.status("everything").await;
    assert_eq!(up.state.status, "connected");
    let pid = up.state.pid.unwrap();

    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let restarted = world
        .wait_for("everything", |s| {
            s.state.status == "connected" && s.state.pid != Some(pid)
        })
        .await;
    assert_eq!(restarted.state.restarts, 1, "{restarted:?}");
    assert!(restarted.state.last_error.is_some());
    let echoed = text(
        world
            .call("mcp__everything__echo", json!({"message": "after"}))
            .await,
    );
    assert!(echoed.contains("after"));
}

#[tokio::test]
async fn a_server_that_cannot_start_says_why_to_admins_and_is_left_out() {
    let world = World::new().await;
    world
        .add(
            "broken",
            json!({"command": "node", "args": ["/nonexistent/server.js"]}),
        )
        .await;
    let error = world
        .manager
        .server_tools(&world.tenant, "broken", &world.ctx.user_id)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("MCP server broken"), "{message}");
    // What the server wrote to stderr can echo anything it read: never in the error, which
    // members and models see.
    assert!(
        !message.contains("Cannot find module") && !message.contains("nonexistent"),
        "{message}"
    );
    assert!(
        world
            .manager
            .tools(&world.tenant, &world.ctx.user_id, None)
            .await
            .is_empty()
    );
    let down = world.status("broken").await;
    assert_eq!(down.state.status, "down");
    assert!(down.state.retry_in_s.is_some());
    let stderr = down.state.stderr.clone().unwrap_or_default();
    assert!(
        stderr.contains("Cannot find module"),
        "admins see why: {stderr:?}"
    );
    assert_eq!(down.for_members().state.stderr, None);
}
