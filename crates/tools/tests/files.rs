//! The file tools through the `Tool` trait.

use serde_json::json;

use crate::support::{World, err, symlink};

#[tokio::test]
async fn read_file_shows_a_numbered_window() {
    let world = World::new().await;
    let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    world.write("notes.txt", &text);

    let all = world
        .call("read_file", json!({"path": "notes.txt"}))
        .await
        .unwrap();
    assert_eq!(all["total_lines"], 50);
    assert!(
        all["content"]
            .as_str()
            .unwrap()
            .starts_with("     1\tline 1\n     2\tline 2\n")
    );
    assert!(all.get("note").is_none());

    let window = world
        .call(
            "read_file",
            json!({"path": "notes.txt", "start_line": 10, "max_lines": 3}),
        )
        .await
        .unwrap();
    assert_eq!(
        window["content"],
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n"
    );
    assert_eq!(
        (window["start_line"].clone(), window["end_line"].clone()),
        (json!(10), json!(12))
    );
    assert!(window["note"].as_str().unwrap().contains("start_line=13"));

    let past = err(world
        .call("read_file", json!({"path": "notes.txt", "start_line": 99}))
        .await);
    assert!(past.contains("50 lines"), "{past}");
}

#[tokio::test]
async fn read_file_handles_edges() {
    let world = World::new().await;
    world.write("crlf.txt", "a\r\nb");
    let out = world
        .call("read_file", json!({"path": "crlf.txt"}))
        .await
        .unwrap();
    assert_eq!(out["content"], "     1\ta\n     2\tb\n");
    assert_eq!(out["total_lines"], 2);

    world.write("empty.txt", "");
    let out = world
        .call("read_file", json!({"path": "empty.txt"}))
        .await
        .unwrap();
    assert_eq!(
        (out["total_lines"].clone(), out["content"].clone()),
        (json!(0), json!(""))
    );

    world.write("long.txt", &"x".repeat(10_000));
    let out = world
        .call("read_file", json!({"path": "long.txt"}))
        .await
        .unwrap();
    assert!(
        out["content"]
            .as_str()
            .unwrap()
            .contains("[line truncated]")
    );

    std::fs::write(world.root.join("blob.bin"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    let binary = err(world.call("read_file", json!({"path": "blob.bin"})).await);
    assert!(binary.contains("binary"), "{binary}");

    std::fs::create_dir_all(world.root.join("dir")).unwrap();
    let dir = err(world.call("read_file", json!({"path": "dir"})).await);
    assert!(dir.contains("folder"), "{dir}");

    let missing = err(world.call("read_file", json!({"path": "nope.txt"})).await);
    assert!(missing.contains("does not exist"), "{missing}");

    let bad = err(world
        .call("read_file", json!({"path": "a", "lines": 3}))
        .await);
    assert!(
        bad.contains("unknown field `lines`") && bad.contains("start_line?"),
        "{bad}"
    );
}

#[tokio::test]
async fn list_files_marks_types_and_sizes() {
    let world = World::new().await;
    world.write("b.txt", "hello");
    world.write("a/inner.txt", "x");
    symlink(&world.outside, &world.root.join("link"));
    let out = world.call("list_files", json!({})).await.unwrap();
    assert_eq!(
        out["entries"],
        json!([
            {"name": "a", "type": "dir"},
            {"name": "b.txt", "type": "file", "size": 5},
            {"name": "link", "type": "symlink"},
        ])
    );
    assert_eq!(out["total"], 3);
    // Listing through the link would leave the root.
    err(world.call("list_files", json!({"path": "link"})).await);
    err(world.call("list_files", json!({"path": "b.txt"})).await);
}

#[tokio::test]
async fn list_files_caps_large_folders() {
    let world = World::new().await;
    for i in 0..1005 {
        world.write(&format!("many/f{i:04}"), "");
    }
    let out = world
        .call("list_files", json!({"path": "many"}))
        .await
        .unwrap();
    assert_eq!(out["entries"].as_array().unwrap().len(), 1000);
    assert_eq!(out["total"], 1005);
    assert!(out["note"].as_str().unwrap().contains("1000 of 1005"));
}

#[tokio::test]
async fn grep_finds_fixed_strings_and_skips_noise() {
    let world = World::new().await;
    world.write("src/main.rs", "fn main() {\n    let x = a.b(c);\n}\n");
    world.write("src/lib.rs", "// a.b(c) here too\n");
    world.write("README.md", "a.b(c)\n");
    world.write("target/debug/out.rs", "a.b(c)\n");
    world.write("node_modules/m/index.js", "a.b(c)\n");
    world.write(".git/config", "a.b(c)\n");
    std::fs::write(world.root.join("bin.dat"), b"a.b(c)\0").unwrap();
    symlink(&world.outside, &world.root.join("out"));
    std::fs::write(world.outside.join("o.rs"), "a.b(c)\n").unwrap();

    let out = world
        .call("grep", json!({"pattern": "a.b(c)", "fixed_strings": true}))
        .await
        .unwrap();
    assert_eq!(
        out["matches"],
        json!([
            "README.md:1: a.b(c)",
            "src/lib.rs:1: // a.b(c) here too",
            "src/main.rs:2:     let x = a.b(c);"
        ])
    );
    assert_eq!(out["truncated"], false);

    let rs = world
        .call(
            "grep",
            json!({"pattern": "a.b(c)", "fixed_strings": true, "glob": "*.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(rs["count"], 2);
    let one = world
        .call(
            "grep",
            json!({"pattern": "a.b(c)", "fixed_strings": true, "max_results": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        (one["count"].clone(), one["truncated"].clone()),
        (json!(1), json!(true))
    );
    let file = world
        .call("grep", json!({"pattern": "main", "path": "src/main.rs"}))
        .await
        .unwrap();
    assert_eq!(file["matches"], json!(["src/main.rs:1: fn main() {"]));
    let none = world
        .call("grep", json!({"pattern": "A.B", "fixed_strings": true}))
        .await
        .unwrap();
    assert_eq!(none["note"], "no matches");

    err(world.call("grep", json!({"pattern": ""})).await);
    err(world
        .call("grep", json!({"pattern": "x", "path": "../outside"}))
        .await);
}

#[tokio::test]
async fn grep_matches_regular_expressions() {
    let world = World::new().await;
    world.write(
        "src/lib.rs",
        "pub fn parse(input: &str) {}\nfn helper() {}\nlet fn_ptr = f;\nconst N: u32 = 42;\n",
    );
    world.write("notes.txt", "TODO: fix\ntodo later\nToDo maybe\nnothing\n");

    let fns = world
        .call("grep", json!({"pattern": r"fn \w+\(", "glob": "*.rs"}))
        .await
        .unwrap();
    assert_eq!(
        fns["matches"],
        json!([
            "src/lib.rs:1: pub fn parse(input: &str) {}",
            "src/lib.rs:2: fn helper() {}"
        ])
    );
    let digits = world
        .call("grep", json!({"pattern": r"=\s*\d+;$"}))
        .await
        .unwrap();
    assert_eq!(
        digits["matches"],
        json!(["src/lib.rs:4: const N: u32 = 42;"])
    );

    let exact = world
        .call("grep", json!({"pattern": "^todo", "path": "notes.txt"}))
        .await
        .unwrap();
    assert_eq!(exact["matches"], json!(["notes.txt:2: todo later"]));
    let any_case = world
        .call("grep", json!({"pattern": "(?i)^todo", "path": "notes.txt"}))
        .await
        .unwrap();
    assert_eq!(
        any_case["matches"],
        json!([
            "notes.txt:1: TODO: fix",
            "notes.txt:2: todo later",
            "notes.txt:3: ToDo maybe"
        ])
    );
}

#[tokio::test]
async fn grep_fixed_strings_takes_special_characters_literally() {
    let world = World::new().await;
    world.write(
        "a.txt",
        "call(x)\ncallx\nprice: $5.00 [net]\nprice: $5000 net\n",
    );

    let call = world
        .call("grep", json!({"pattern": "call(x)", "fixed_strings": true}))
        .await
        .unwrap();
    assert_eq!(call["matches"], json!(["a.txt:1: call(x)"]));
    // The same pattern as a regular expression is a group, so it matches the other line.
    let group = world
        .call("grep", json!({"pattern": "call(x)"}))
        .await
        .unwrap();
    assert_eq!(group["matches"], json!(["a.txt:2: callx"]));
    let price = world
        .call(
            "grep",
            json!({"pattern": "$5.00 [net]", "fixed_strings": true}),
        )
        .await
        .unwrap();
    assert_eq!(price["matches"], json!(["a.txt:3: price: $5.00 [net]"]));
    // Without fixed_strings, `(` alone is an invalid pattern; literally it is fine.
    let paren = world
        .call("grep", json!({"pattern": "(", "fixed_strings": true}))
        .await
        .unwrap();
    assert_eq!(paren["count"], 1);
}

#[tokio::test]
async fn grep_refuses_bad_and_oversized_patterns() {
    let world = World::new().await;
    world.write("a.txt", "a(\n");

    let message = err(world.call("grep", json!({"pattern": "a("})).await);
    assert!(
        message.starts_with("invalid regular expression `a(`: "),
        "{message}"
    );
    assert!(message.contains("unclosed group"), "{message}");
    assert!(message.contains("with a backslash"), "{message}");
    assert!(message.contains("fixed_strings"), "{message}");
    assert!(!message.contains('\n'), "{message}");
    let message = err(world.call("grep", json!({"pattern": r"(\w+)\1"})).await);
    assert!(
        message.contains("backreferences are not supported"),
        "{message}"
    );

    // A short pattern whose compiled program would be huge is refused, not built.
    let message = err(world
        .call("grep", json!({"pattern": r"\w{1000}{1000}"}))
        .await);
    assert!(message.contains("compiles to more than"), "{message}");

    let long = "a".repeat(1001);
    for fixed_strings in [false, true] {
        let message = err(world
            .call(
                "grep",
                json!({"pattern": long, "fixed_strings": fixed_strings}),
            )
            .await);
        assert!(message.contains("1001 characters"), "{message}");
        assert!(message.contains("limit is 1000"), "{message}");
    }
    let at_limit = world
        .call("grep", json!({"pattern": "a".repeat(1000)}))
        .await
        .unwrap();
    assert_eq!(at_limit["note"], "no matches");
}

#[tokio::test]
async fn write_file_creates_overwrites_and_respects_overwrite_false() {
    let world = World::new().await;
    let out = world
        .call(
            "write_file",
            json!({"path": "deep/new/file.txt", "content": "one"}),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        json!({"path": "deep/new/file.txt", "bytes_written": 3, "created": true})
    );
    assert_eq!(world.read("deep/new/file.txt"), "one");

    let out = world
        .call(
            "write_file",
            json!({"path": "deep/new/file.txt", "content": "two"}),
        )
        .await;
    assert_eq!(out.unwrap()["created"], false);
    assert_eq!(world.read("deep/new/file.txt"), "two");

    let refused = err(world
        .call(
            "write_file",
            json!({"path": "deep/new/file.txt", "content": "3", "overwrite": false}),
        )
        .await);
    assert!(refused.contains("already exists"), "{refused}");
    assert_eq!(world.read("deep/new/file.txt"), "two");

    world
        .call(
            "write_file",
            json!({"path": "fresh.txt", "content": "", "overwrite": false}),
        )
        .await
        .unwrap();
    assert_eq!(world.read("fresh.txt"), "");
    err(world
        .call("write_file", json!({"path": "deep", "content": "x"}))
        .await);
}

#[tokio::test]
async fn replace_in_file_is_exact_and_checks_count() {
    let world = World::new().await;
    world.write("a.txt", "alpha beta alpha\n");
    let not_found = err(world
        .call(
            "replace_in_file",
            json!({"path": "a.txt", "old": "gamma", "new": "x"}),
        )
        .await);
    assert!(not_found.contains("not found"), "{not_found}");

    let wrong = err(world
        .call(
            "replace_in_file",
            json!({"path": "a.txt", "old": "alpha", "new": "x", "count": 1}),
        )
        .await);
    assert!(wrong.contains("2 occurrence"), "{wrong}");
    assert_eq!(world.read("a.txt"), "alpha beta alpha\n");

    let out = world
        .call(
            "replace_in_file",
            json!({"path": "a.txt", "old": "beta", "new": "BETA", "count": 1}),
        )
        .await
        .unwrap();
    assert_eq!(out["replacements"], 1);
    let out = world
        .call(
            "replace_in_file",
            json!({"path": "a.txt", "old": "alpha", "new": "A"}),
        )
        .await;
    assert_eq!(out.unwrap()["replacements"], 2);
    assert_eq!(world.read("a.txt"), "A BETA A\n");

    err(world
        .call(
            "replace_in_file",
            json!({"path": "a.txt", "old": "", "new": "x"}),
        )
        .await);
    err(world
        .call(
            "replace_in_file",
            json!({"path": "missing.txt", "old": "a", "new": "b"}),
        )
        .await);
}

#[tokio::test]
async fn writes_into_read_only_roots_are_refused() {
    let world = World::new().await;
    world.write("a.txt", "keep");
    let mut ctx = world.ctx.clone();
    ctx.roots[0].writable = false;
    for (tool, args) in [
        ("write_file", json!({"path": "a.txt", "content": "x"})),
        (
            "replace_in_file",
            json!({"path": "a.txt", "old": "keep", "new": "x"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch"}),
        ),
    ] {
        let message = err(world.call_with(&ctx, tool, args).await);
        assert!(message.contains("read-only"), "{tool}: {message}");
    }
    assert_eq!(world.read("a.txt"), "keep");
    assert!(
        world
            .call_with(&ctx, "read_file", json!({"path": "a.txt"}))
            .await
            .is_ok()
    );
}
