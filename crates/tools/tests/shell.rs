//! `run_shell`: one program, scrubbed environment, bounded in time, stoppable.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{World, err};

#[tokio::test]
async fn runs_a_program_in_the_primary_folder() {
    let world = World::new().await;
    let out = world
        .call("run_shell", json!({"command": "echo 'hello world' again"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        json!({"exit_code": 0, "stdout": "hello world again\n", "stderr": ""})
    );

    let pwd = world
        .call("run_shell", json!({"command": "pwd"}))
        .await
        .unwrap();
    assert_eq!(
        pwd["stdout"].as_str().unwrap().trim(),
        world.root.display().to_string()
    );

    let failed = world
        .call("run_shell", json!({"command": "ls does-not-exist"}))
        .await
        .unwrap();
    assert_ne!(failed["exit_code"], 0);
    assert!(!failed["stderr"].as_str().unwrap().is_empty());

    let code = world
        .call("run_shell", json!({"command": "sh -c 'exit 3'"}))
        .await
        .unwrap();
    assert_eq!(code["exit_code"], 3);
}

#[tokio::test]
async fn the_environment_is_scrubbed() {
    let world = World::new().await;
    let out = world
        .call("run_shell", json!({"command": "env"}))
        .await
        .unwrap();
    let pwd = format!("PWD={}", world.root.display());
    // The sandbox names the working folder in PWD; nothing else may be added.
    let mut vars: Vec<&str> = out["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|v| *v != pwd)
        .collect();
    vars.sort_unstable();
    assert_eq!(
        vars,
        [
            format!("HOME={}", world.root.display()),
            "LANG=C.UTF-8".to_owned(),
            "PATH=/usr/local/bin:/usr/bin:/bin".to_owned(),
        ]
    );
}

#[tokio::test]
async fn shell_operators_are_refused() {
    let world = World::new().await;
    for command in [
        "echo a | cat",
        "echo a; echo b",
        "true && echo b",
        "echo x > f.txt",
        "echo $HOME",
    ] {
        let message = err(world.call("run_shell", json!({"command": command})).await);
        assert!(!message.is_empty(), "{command}");
    }
    let message = err(world
        .call("run_shell", json!({"command": "echo x > f.txt"}))
        .await);
    assert!(message.contains("single program"), "{message}");
    assert!(!world.root.join("f.txt").exists());
}

#[tokio::test]
async fn a_missing_program_is_named() {
    let world = World::new().await;
    let message = err(world
        .call(
            "run_shell",
            json!({"command": "no-such-program-xyz --help"}),
        )
        .await);
    assert!(
        message.contains("'no-such-program-xyz' was not found"),
        "{message}"
    );
}

#[tokio::test]
async fn a_timeout_kills_the_program() {
    let world = World::new().await;
    let started = Instant::now();
    let message = err(world
        .call(
            "run_shell",
            json!({"command": "sleep 5", "timeout_seconds": 1}),
        )
        .await);
    assert!(message.starts_with("timed out after 1 s"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_stops_the_program_promptly() {
    let world = World::new().await;
    let cancel = world.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    // The child of `sh` shares its process group and must die with it (it would hold the pipes).
    let message = err(world
        .call(
            "run_shell",
            json!({"command": "sh -c 'sleep 30; echo done'"}),
        )
        .await);
    let elapsed = started.elapsed();
    assert!(message.starts_with("interrupted by user"), "{message}");
    assert!(elapsed < Duration::from_millis(1500), "took {elapsed:?}");
}

#[tokio::test]
async fn output_is_capped_to_its_tail() {
    let world = World::new().await;
    let out = world
        .call(
            "run_shell",
            json!({"command": "sh -c 'seq 1 20000; echo END'"}),
        )
        .await
        .unwrap();
    let stdout = out["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("[… earlier output truncated"),
        "{}",
        &stdout[..80]
    );
    assert!(stdout.ends_with("20000\nEND\n"));
    assert!(stdout.chars().count() < 20_200);
}
