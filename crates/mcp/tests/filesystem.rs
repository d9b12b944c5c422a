//! server-filesystem in the exec sandbox: even when told it may use `/`, it sees only its
//! folder (and a read-only system), never the data directory beside it.

use serde_json::json;

use crate::support::{World, packages, script, text};

#[tokio::test]
async fn the_filesystem_server_sees_only_its_folder() {
    let world = World::new().await;
    let folder = world.folder.display().to_string();
    world
        .add(
            "files",
            json!({
                "command": "node",
                // The server's own allow-list is everything: only the sandbox bounds it.
                "args": [script("server-filesystem"), "/"],
                "folders": [{"path": folder, "writable": true}, {"path": packages()}],
            }),
        )
        .await;

    let written = world
        .call(
            "mcp__files__write_file",
            json!({"path": format!("{folder}/notes.txt"), "content": "from the server"}),
        )
        .await;
    text(written);
    assert_eq!(
        std::fs::read_to_string(world.folder.join("notes.txt")).unwrap(),
        "from the server"
    );

    let secret = world.outside.join("secret.txt").display().to_string();
    let error = world
        .call("mcp__files__read_text_file", json!({"path": secret}))
        .await
        .unwrap_err();
    assert!(!error.message.contains("the server's secret"), "{error}");
    let error = world
        .call(
            "mcp__files__list_directory",
            json!({"path": world.outside.display().to_string()}),
        )
        .await
        .unwrap_err();
    assert!(!error.message.contains("secret.txt"), "{error}");

    let root = text(
        world
            .call("mcp__files__list_directory", json!({"path": "/"}))
            .await,
    );
    let first = |p: &std::path::Path| {
        p.components()
            .nth(1)
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .into_owned()
    };
    let mut allowed: Vec<String> = [
        "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr", "var",
    ]
    .map(String::from)
    .to_vec();
    allowed.push(first(&world.folder));
    allowed.push(first(&packages()));
    for line in root.lines() {
        let entry = line.rsplit(' ').next().unwrap();
        assert!(
            allowed.iter().any(|a| a == entry),
            "/ shows {entry}: {root}"
        );
    }
    // Beside its folder, the data folder does not even exist for it.
    let parent = world.folder.parent().unwrap().display().to_string();
    let beside = text(
        world
            .call("mcp__files__list_directory", json!({"path": parent}))
            .await,
    );
    assert_eq!(beside.trim(), "[DIR] folder", "{beside}");
    let var = text(
        world
            .call("mcp__files__list_directory", json!({"path": "/var"}))
            .await,
    );
    assert_eq!(var.trim(), "[DIR] tmp", "only the sandbox's own /var/tmp");
    let etc = text(
        world
            .call("mcp__files__list_directory", json!({"path": "/etc"}))
            .await,
    );
    assert!(!etc.contains("shadow"), "{etc}");
}
