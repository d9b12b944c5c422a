//! The exec sandbox of `run_shell`: what a command can reach, how far it can grow, and that it
//! ends with the call.
//!
//! These tests need bubblewrap (`apt-get install bubblewrap`) and user namespaces. Without them
//! they fail with the sandbox's refusal, never pass: a sandbox that cannot start must not look
//! like a sandbox that works.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use workmate_tools::{BuiltinOptions, Sandbox, ShellSandbox};

use crate::support::{World, err};

const SECRET: &str = "s3cr3t-admin-token-value";

/// A world whose folder looks like a data directory: an admin token and a database next to the
/// session's folder.
async fn data_dir_world(options: &BuiltinOptions) -> World {
    let world = World::with_options(options).await;
    let base = world.root.parent().unwrap();
    std::fs::write(base.join("admin_token"), SECRET).unwrap();
    std::fs::write(base.join("outside/secret.txt"), SECRET).unwrap();
    world
}

fn unsandboxed() -> BuiltinOptions {
    BuiltinOptions {
        shell_sandbox: ShellSandbox::None,
        ..BuiltinOptions::default()
    }
}

async fn shell(world: &World, command: &str) -> serde_json::Value {
    world
        .call(
            "run_shell",
            json!({"command": command, "timeout_seconds": 30}),
        )
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

#[tokio::test]
async fn the_data_directory_and_the_servers_secrets_are_out_of_reach() {
    let world = data_dir_world(&BuiltinOptions::default()).await;
    let base = world.root.parent().unwrap().to_owned();
    world.write("notes.txt", "inside\n");
    // The allowed path: the session's own files are readable.
    assert_eq!(shell(&world, "cat notes.txt").await["stdout"], "inside\n");

    let db = base.join("store.db");
    assert!(std::fs::metadata(&db).unwrap().len() > 0);
    let server_pid = std::process::id();
    for command in [
        "cat ../admin_token".to_owned(),
        "cat ../../../admin_token".to_owned(),
        "cat ../outside/secret.txt".to_owned(),
        format!("cat {}", base.join("admin_token").display()),
        format!("cat {}", base.join("outside/secret.txt").display()),
        format!("cat {}", db.display()),
        format!("cat /proc/{server_pid}/environ"),
    ] {
        let out = shell(&world, &command).await;
        assert_ne!(out["exit_code"], 0, "{command}: {out}");
        assert!(
            !out["stdout"].as_str().unwrap().contains(SECRET),
            "{command}"
        );
    }

    // Above the session's folder there is only the path leading to it.
    let listing = shell(&world, &format!("ls -a {}", base.display())).await;
    assert_eq!(listing["stdout"], ".\n..\nroot\n");

    // Its own /proc belongs to a fresh PID namespace and holds only the scrubbed environment.
    let environ = shell(&world, "cat /proc/self/environ").await;
    let mut vars: Vec<&str> = environ["stdout"]
        .as_str()
        .unwrap()
        .split('\0')
        .filter(|v| !v.is_empty())
        .map(|v| v.split_once('=').unwrap().0)
        .collect();
    vars.sort_unstable();
    assert_eq!(vars, ["HOME", "LANG", "PATH", "PWD"]);
    let pids = shell(&world, "ls /proc").await;
    let pids: Vec<u64> = pids["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.parse().ok())
        .collect();
    assert!(pids.len() < 6, "only the sandbox's processes: {pids:?}");
    assert!(!pids.contains(&u64::from(server_pid)));
}

#[tokio::test]
async fn the_same_reads_succeed_without_the_sandbox() {
    // Shows the test above would notice a sandbox that does nothing.
    let world = data_dir_world(&unsandboxed()).await;
    let out = shell(&world, "cat ../admin_token").await;
    assert_eq!(out["stdout"], SECRET);
}

#[tokio::test]
async fn the_system_is_read_only_and_the_workspace_writable() {
    let world = World::new().await;
    let out = shell(
        &world,
        "sh -c 'echo made > made.txt && mkdir -p sub && echo x > sub/y'",
    )
    .await;
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(world.read("made.txt"), "made\n");
    assert_eq!(world.read("sub/y"), "x\n");
    // A file the server wrote (as the server's user) can be changed by the command.
    world.write("from-server.txt", "old\n");
    let out = shell(&world, "sh -c 'echo new > from-server.txt'").await;
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(world.read("from-server.txt"), "new\n");

    for command in [
        "touch /usr/bin/planted",
        "touch /etc/passwd",
        "touch /planted",
    ] {
        let out = shell(&world, command).await;
        assert_ne!(out["exit_code"], 0, "{command}");
    }
    assert!(!std::path::Path::new("/usr/bin/planted").exists());
    let tmp = shell(&world, "sh -c 'echo t > /tmp/t && cat /tmp/t'").await;
    assert_eq!(tmp["stdout"], "t\n");
}

#[tokio::test]
async fn the_hosts_loopback_is_unreachable_unless_network_is_allowed() {
    let mut world = World::new().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}'");

    let out = shell(&world, &connect).await;
    assert_ne!(out["exit_code"], 0, "{out}");

    // The allowed path: with network granted for the call, the same connection goes through.
    world.ctx.network = true;
    let out = shell(&world, &connect).await;
    assert_eq!(out["exit_code"], 0, "{out}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_ok(), "the host saw the connection");
}

#[tokio::test]
async fn a_fork_bomb_stops_at_its_limit() {
    let world = World::new().await;
    let started = Instant::now();
    let out = shell(&world, "sh -c 'bomb() { bomb | bomb & }; bomb; sleep 2'").await;
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    let stderr = out["stderr"].as_str().unwrap();
    assert!(stderr.to_lowercase().contains("fork"), "{out}");

    // Counted: a plain loop of background processes stops at the process limit.
    let limit = Sandbox::default().max_processes;
    let out = shell(
        &world,
        "sh -c 'i=0; while [ $i -lt 1000 ]; do sleep 60 & i=$((i+1)); echo $i; done'",
    )
    .await;
    let started: u64 = out["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        started < limit && started > limit / 2,
        "{started} of {limit}"
    );
    assert!(
        out["stderr"].as_str().unwrap().contains("fork"),
        "{}",
        out["stderr"]
    );
}

/// Processes whose command line is exactly `argv`.
fn processes(argv: &[&str]) -> Vec<PathBuf> {
    let wanted: String = argv.iter().map(|a| format!("{a}\0")).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| std::fs::read(p.join("cmdline")).is_ok_and(|c| c == wanted.as_bytes()))
        .collect()
}

#[tokio::test]
async fn a_background_process_ends_with_the_command() {
    let world = World::new().await;
    let started = Instant::now();
    let out = shell(&world, "sh -c 'sleep 4242.5 & echo started'").await;
    assert_eq!(out["stdout"], "started\n");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(processes(&["sleep", "4242.5"]), Vec::<PathBuf>::new());

    // The allowed path: unsandboxed, the same background process survives the call (so the
    // check above can see one); it is killed here.
    let world = World::with_options(&unsandboxed()).await;
    let out = shell(&world, "sh -c 'sleep 4243.5 & echo $!'").await;
    let pid = out["stdout"].as_str().unwrap().trim().to_owned();
    assert_eq!(processes(&["sleep", "4243.5"]).len(), 1);
    std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
}

#[tokio::test]
async fn without_namespaces_the_command_is_refused_not_run_unsandboxed() {
    let options = BuiltinOptions {
        shell_sandbox: ShellSandbox::Namespaces(Sandbox {
            program: PathBuf::from("/nonexistent/bwrap"),
            ..Sandbox::default()
        }),
        ..BuiltinOptions::default()
    };
    let world = World::with_options(&options).await;
    let message = err(world
        .call("run_shell", json!({"command": "touch ran.txt"}))
        .await);
    assert!(
        message.contains("the exec sandbox cannot start"),
        "{message}"
    );
    assert!(message.contains("/nonexistent/bwrap"), "{message}");
    assert!(message.contains("shell_sandbox = \"none\""), "{message}");
    assert!(!world.root.join("ran.txt").exists());
    let probe = options.shell_sandbox.probe().await.unwrap_err();
    assert!(probe.contains("cannot start"), "{probe}");

    // The allowed path: the default sandbox starts and runs the same command.
    let world = World::new().await;
    assert!(ShellSandbox::default().probe().await.is_ok());
    shell(&world, "touch ran.txt").await;
    assert!(world.root.join("ran.txt").exists());
}

#[tokio::test]
async fn unsandboxed_runs_as_before() {
    let world = World::with_options(&unsandboxed()).await;
    let out = shell(&world, "env").await;
    let mut vars: Vec<&str> = out["stdout"].as_str().unwrap().lines().collect();
    vars.sort_unstable();
    assert_eq!(
        vars,
        [
            format!("HOME={}", world.root.display()),
            "LANG=C.UTF-8".to_owned(),
            "PATH=/usr/local/bin:/usr/bin:/bin".to_owned(),
        ]
    );
    let pwd = shell(&world, "pwd").await;
    assert_eq!(
        pwd["stdout"].as_str().unwrap().trim(),
        world.root.display().to_string()
    );
    let probe = ShellSandbox::None.probe().await.unwrap();
    assert!(probe.starts_with("none"), "{probe}");
}

/// Runs `script` with `sh -c` where a persona clone's git would run; its exit code and output.
async fn as_persona_git(
    work: &std::path::Path,
    read_only: &[PathBuf],
    script: &str,
) -> (i32, String) {
    use workmate_tools::GitSandbox;
    let argv = ["sh".to_owned(), "-c".to_owned(), script.to_owned()];
    let mut command = ShellSandbox::default()
        .git_command(work, read_only, &argv, &[])
        .await
        .unwrap();
    let output = command.output().await.unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

#[tokio::test]
async fn a_persona_clone_runs_in_the_sandbox_seeing_only_its_work_folder_and_repository() {
    let dir = tempfile::tempdir().unwrap();
    // Reachable by the sandbox user, as the system's temporary folder is.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("session_key"), SECRET).unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("manifest.md"), "persona\n").unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let repos = [repo.clone()];

    // The allowed path: the repository reads, the work folder takes the checkout.
    let (code, out) = as_persona_git(
        &work,
        &repos,
        &format!("cp {}/manifest.md \"$HOME/copied.md\"", repo.display()),
    )
    .await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(work.join("copied.md")).unwrap(),
        "persona\n"
    );

    for script in [
        format!("cat {}/session_key", data.display()),
        format!("ls {}", data.display()),
        format!("touch {}/planted", repo.display()),
        format!("touch {}/planted", dir.path().display()),
    ] {
        let (code, out) = as_persona_git(&work, &repos, &script).await;
        assert!(code != 0 || out.trim().is_empty(), "{script}: {out}");
        assert!(!out.contains(SECRET), "{script}: {out}");
    }
    assert!(!repo.join("planted").exists() && !dir.path().join("planted").exists());
}
