//! `run_shell`: runs one program with arguments in the session's primary folder.
//!
//! Invariants: no shell interprets the command (it is split into words and executed directly); the
//! child sees a scrubbed environment (only `PATH`, `HOME` = the primary folder and `LANG`) and no
//! stdin; its output is kept as a bounded tail; and it never outlives the call — on timeout or when
//! the user stops the turn its whole process group is killed at once.

mod capture;
mod words;

use std::process::Stdio;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use self::capture::Tail;
use crate::args::simple_tool;
use crate::{ToolContext, ToolError, ToolMetadata, ToolResult};

const SAFE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
const DEFAULT_TIMEOUT_S: u64 = 120;
const MAX_TIMEOUT_S: u64 = 600;
/// How long output readers may lag behind the exit (a leftover background process can hold the
/// pipes open forever).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Arguments of `run_shell`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunShellArgs {
    /// The program and its arguments, quoted as in a POSIX shell, e.g. `git status -s` or
    /// `python3 -c 'print(1)'`.
    command: String,
    /// Seconds before the program is killed (default 120, at most 600).
    #[serde(default)]
    timeout_seconds: Option<u64>,
    /// A short description of what the command does, shown to the person approving it.
    #[serde(default)]
    description: Option<String>,
}

const DESCRIPTION: &str = "Run a single program with arguments in the primary folder and return \
its exit code, stdout and stderr. There is no shell: quoting works as in sh, but pipes, \
redirects, `;`, `&&`, variables ($X), globs (*) and `~` are refused. The environment holds only \
PATH, HOME (the primary folder) and LANG. Output keeps the last 20,000 characters of each stream.";

simple_tool!(
    /// `run_shell(command, timeout_seconds=120, description?)`.
    RunShell,
    "run_shell",
    RunShellArgs,
    DESCRIPTION,
    ToolMetadata::high("shell", "command"),
    run
);

/// Why a running program was stopped.
enum Stop {
    Timeout(u64),
    Cancelled,
}

async fn run(ctx: &ToolContext, args: RunShellArgs) -> ToolResult {
    let argv = words::split(&args.command).map_err(ToolError::new)?;
    let Some(root) = ctx.roots.first() else {
        return Err(ToolError::new(
            "this session has no folder to run commands in",
        ));
    };
    let timeout = args
        .timeout_seconds
        .unwrap_or(DEFAULT_TIMEOUT_S)
        .clamp(1, MAX_TIMEOUT_S);
    let program = &argv[0];
    let mut command = tokio::process::Command::new(program);
    command
        .args(&argv[1..])
        .current_dir(&root.path)
        .env_clear()
        .env("PATH", SAFE_PATH)
        .env("HOME", &root.path)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        // Its own process group, so whatever it starts can be killed with it.
        .process_group(0);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::new(format!(
            "program '{program}' was not found (searched PATH={SAFE_PATH} from {})",
            root.path.display()
        )),
        std::io::ErrorKind::PermissionDenied => {
            ToolError::new(format!("program '{program}' is not executable"))
        }
        _ => ToolError::new(format!("cannot start '{program}': {e}")),
    })?;
    tracing::debug!(
        session = %ctx.session_id,
        program = %program,
        description = args.description.as_deref().unwrap_or(""),
        "Shell command started."
    );

    let stdout = Tail::default();
    let stderr = Tail::default();
    let readers = [
        tokio::spawn(stdout.clone().drain(child.stdout.take())),
        tokio::spawn(stderr.clone().drain(child.stderr.take())),
    ];

    let outcome = tokio::select! {
        status = child.wait() => Ok(status),
        () = tokio::time::sleep(Duration::from_secs(timeout)) => Err(Stop::Timeout(timeout)),
        () = ctx.cancel.cancelled() => Err(Stop::Cancelled),
    };
    let status = match outcome {
        Ok(status) => {
            status.map_err(|e| ToolError::new(format!("waiting for '{program}': {e}")))?
        }
        Err(stop) => {
            // The child is not reaped yet, so its pid still names its process group.
            if let Some(pid) = child.id() {
                capture::kill_group(pid).await;
            }
            let _ = child.start_kill();
            let _ = tokio::time::timeout(DRAIN_GRACE, child.wait()).await;
            for reader in readers {
                reader.abort();
            }
            let message = match stop {
                Stop::Timeout(s) => format!("timed out after {s} s"),
                Stop::Cancelled => "interrupted by user".to_owned(),
            };
            return Err(ToolError::new(format!(
                "{message}{}",
                capture::partial_output(&stdout, &stderr)
            )));
        }
    };
    for mut reader in readers {
        if tokio::time::timeout(DRAIN_GRACE, &mut reader)
            .await
            .is_err()
        {
            reader.abort();
            tracing::debug!(program = %program, "Output still open after exit; dropped.");
        }
    }
    Ok(json!({
        "exit_code": status.code(),
        "stdout": stdout.render(),
        "stderr": stderr.render(),
    }))
}
