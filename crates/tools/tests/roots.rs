//! No path escapes the session's roots, whatever its spelling.

use std::path::Path;

use serde_json::json;
use workmate_tools::{Access, Root, resolve};

use crate::support::{World, err, symlink};

fn roots(world: &World) -> Vec<Root> {
    world.ctx.roots.clone()
}

#[tokio::test]
async fn escape_attempts_are_refused_for_reading_and_writing() {
    let world = World::new().await;
    let outside = world.outside.display().to_string();
    std::fs::create_dir_all(world.root.join("a/b")).unwrap();
    // A symlink inside the root pointing outside, a chain of directory symlinks ending outside,
    // a dangling symlink to an outside path, and a symlink loop.
    symlink(&world.outside, &world.root.join("out"));
    symlink(&world.root.join("out"), &world.root.join("hop1"));
    symlink(&world.root.join("hop1"), &world.root.join("a/hop2"));
    symlink(&world.outside.join("new.txt"), &world.root.join("dangling"));
    symlink(&world.root.join("loop2"), &world.root.join("loop1"));
    symlink(&world.root.join("loop1"), &world.root.join("loop2"));
    symlink(
        &world.outside.join("secret.txt"),
        &world.root.join("secret-link"),
    );

    let attempts = [
        "../x".to_owned(),
        "../outside/secret.txt".to_owned(),
        "a/../../x".to_owned(),
        "a/b/../../../outside/secret.txt".to_owned(),
        "./../outside".to_owned(),
        "nonexistent/../../outside/secret.txt".to_owned(),
        "nonexistent/deeper/../../../outside".to_owned(),
        format!("{outside}/secret.txt"),
        format!("{outside}/new.txt"),
        format!("{}/../outside/secret.txt", world.root.display()),
        "/etc/passwd".to_owned(),
        "/".to_owned(),
        "out/secret.txt".to_owned(),
        "out/new.txt".to_owned(),
        "out".to_owned(),
        "hop1/secret.txt".to_owned(),
        "a/hop2/secret.txt".to_owned(),
        "a/hop2/deep/new.txt".to_owned(),
        "dangling".to_owned(),
        "loop1".to_owned(),
        "loop1/x".to_owned(),
        "secret-link".to_owned(),
        "a/\0/x".to_owned(),
        "\0".to_owned(),
    ];
    for attempt in &attempts {
        for access in [Access::Read, Access::Write] {
            assert!(
                resolve(&roots(&world), attempt, access).is_err(),
                "{attempt:?} ({access:?}) should be refused"
            );
        }
    }
    // The same through the tools.
    for attempt in &attempts {
        err(world.call("read_file", json!({"path": attempt})).await);
        err(world
            .call("write_file", json!({"path": attempt, "content": "x"}))
            .await);
    }
    assert!(!world.outside.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(world.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn paths_inside_resolve_to_real_locations() {
    let world = World::new().await;
    let roots = roots(&world);
    world.write("a/file.txt", "x");
    symlink(&world.root.join("a"), &world.root.join("alias"));
    let root = &world.root;
    let cases = [
        ("a/file.txt", root.join("a/file.txt")),
        ("./a/../a/file.txt", root.join("a/file.txt")),
        ("alias/file.txt", root.join("a/file.txt")),
        ("new/dir/file.txt", root.join("new/dir/file.txt")),
        (".", root.clone()),
        ("", root.clone()),
    ];
    for (path, expected) in cases {
        assert_eq!(
            resolve(&roots, path, Access::Write).unwrap(),
            expected,
            "{path}"
        );
    }
    let absolute = root.join("a/file.txt").display().to_string();
    assert_eq!(
        resolve(&roots, &absolute, Access::Read).unwrap(),
        root.join("a/file.txt")
    );
}

#[tokio::test]
async fn read_only_roots_refuse_writes_and_errors_name_the_roots() {
    let world = World::new().await;
    let roots = vec![
        Root {
            path: world.root.clone(),
            writable: true,
        },
        Root {
            path: world.outside.clone(),
            writable: false,
        },
    ];
    let secret = world.outside.join("secret.txt").display().to_string();
    assert_eq!(
        resolve(&roots, &secret, Access::Read).unwrap(),
        Path::new(&secret)
    );
    let message = resolve(&roots, &secret, Access::Write).unwrap_err().message;
    assert!(message.contains("read-only"), "{message}");
    assert!(
        message.contains(&world.root.display().to_string()),
        "{message}"
    );

    let message = resolve(&roots, "/etc/passwd", Access::Read)
        .unwrap_err()
        .message;
    assert!(
        message.contains("outside the session's folders"),
        "{message}"
    );
    assert!(
        message.contains("(writable)") && message.contains("(read-only)"),
        "{message}"
    );

    // A read-only folder nested in a writable one stays read-only.
    std::fs::create_dir_all(world.root.join("vendor")).unwrap();
    let nested = vec![
        Root {
            path: world.root.clone(),
            writable: true,
        },
        Root {
            path: world.root.join("vendor"),
            writable: false,
        },
    ];
    assert!(resolve(&nested, "vendor/lib.rs", Access::Write).is_err());
    assert!(resolve(&nested, "vendor/lib.rs", Access::Read).is_ok());
    assert!(resolve(&nested, "src/lib.rs", Access::Write).is_ok());
}

#[test]
fn generated_escape_paths_never_panic_or_escape() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("r");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    let roots = vec![Root {
        path: root.clone(),
        writable: true,
    }];
    let parts = ["..", ".", "a", "b", "x", "", "/", "\0", "a/..", "..."];
    // Every 4-part combination: 10^4 paths.
    for i in 0..10_000usize {
        let path: Vec<&str> = (0..4).map(|k| parts[(i / 10usize.pow(k)) % 10]).collect();
        let path = path.join("/");
        for access in [Access::Read, Access::Write] {
            if let Ok(resolved) = resolve(&roots, &path, access) {
                assert!(
                    resolved.starts_with(&root),
                    "{path:?} escaped to {resolved:?}"
                );
            }
        }
    }
}
