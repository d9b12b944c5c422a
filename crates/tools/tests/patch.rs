//! `apply_patch`: all or nothing.

use serde_json::json;

use crate::support::{World, err};

#[tokio::test]
async fn applies_adds_updates_moves_and_deletes() {
    let world = World::new().await;
    world.write("src/lib.rs", "fn one() {}\n\nfn two() {\n    1\n}\n");
    world.write("old.txt", "bye\n");
    world.write("rename/me.txt", "a\nb\n");
    let patch = "*** Begin Patch
*** Add File: docs/new.md
+# Title
+text
*** Update File: src/lib.rs
@@ fn two() {
-    1
+    2
*** Delete File: old.txt
*** Update File: rename/me.txt
*** Move to: renamed.txt
 a
-b
+c
*** End Patch";
    let out = world
        .call("apply_patch", json!({"patch": patch}))
        .await
        .unwrap();
    assert_eq!(
        out["changes"],
        json!([
            "A docs/new.md",
            "M src/lib.rs",
            "D old.txt",
            "M rename/me.txt -> renamed.txt"
        ])
    );
    assert_eq!(world.read("docs/new.md"), "# Title\ntext\n");
    assert_eq!(
        world.read("src/lib.rs"),
        "fn one() {}\n\nfn two() {\n    2\n}\n"
    );
    assert!(!world.root.join("old.txt").exists());
    assert!(!world.root.join("rename/me.txt").exists());
    assert_eq!(world.read("renamed.txt"), "a\nc\n");
}

#[tokio::test]
async fn a_bad_hunk_anywhere_changes_nothing() {
    let world = World::new().await;
    world.write("a.txt", "one\n");
    world.write("b.txt", "two\n");
    let patch = "*** Begin Patch
*** Update File: a.txt
-one
+ONE
*** Add File: c.txt
+new
*** Update File: b.txt
-not there
+x
*** End Patch";
    let message = err(world.call("apply_patch", json!({"patch": patch})).await);
    assert!(
        message.contains("b.txt") && message.contains("not there"),
        "{message}"
    );
    assert_eq!(world.read("a.txt"), "one\n");
    assert!(!world.root.join("c.txt").exists());
}

#[tokio::test]
async fn escapes_and_conflicts_are_refused_before_writing() {
    let world = World::new().await;
    world.write("a.txt", "one\n");
    let outside = world.outside.join("secret.txt").display().to_string();
    for patch in [
        "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** Add File: ../evil.txt\n+x\n*** End Patch".to_owned(),
        format!("*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** Delete File: {outside}\n*** End Patch"),
        "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** Add File: a.txt\n+dup\n*** End Patch".to_owned(),
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../moved.txt\n-one\n+two\n*** End Patch".to_owned(),
        "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch".to_owned(),
        "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n".to_owned(),
    ] {
        err(world.call("apply_patch", json!({"patch": patch})).await);
        assert_eq!(world.read("a.txt"), "one\n", "{patch}");
    }
    assert!(world.outside.join("secret.txt").exists());
    assert!(!world.outside.join("evil.txt").exists());
}
