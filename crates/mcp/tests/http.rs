//! server-everything over streamable HTTP.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::support::{World, script, text};

/// A free port on the loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn tools_of_a_streamable_http_server_are_listed_and_called() {
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .args([script("server-everything"), "streamableHttp".into()])
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let world = World::new().await;
    world
        .add(
            "remote",
            json!({"url": format!("http://127.0.0.1:{port}/mcp"), "headers": {"X-Team": "sales"}}),
        )
        .await;
    let echoed = text(
        world
            .call("mcp__remote__echo", json!({"message": "over http"}))
            .await,
    );
    assert!(echoed.contains("over http"), "{echoed}");
    let summed = text(
        world
            .call("mcp__remote__get-sum", json!({"a": 20, "b": 22}))
            .await,
    );
    assert!(summed.contains("42"), "{summed}");
    server.kill().await.unwrap();
}
