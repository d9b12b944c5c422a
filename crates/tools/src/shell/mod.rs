//! `run_shell`: runs one program with arguments in the session's primary folder, inside the exec
//! sandbox ([`sandbox`]) unless the operator turned it off.
//!
//! Invariants: no shell interprets the command (it is split into words and executed directly); the
//! child sees a scrubbed environment (only `PATH`, `HOME` = the primary folder, `LANG` and, in the
//! sandbox, `PWD`) and no stdin; its output is kept as a bounded tail; and it never outlives the
//! call — on timeout or when the user stops the turn its whole process group is killed at once,
//! and in the sandbox every process it started ends with it even when it exits normally. A
//! command never runs unsandboxed because the sandbox failed: it is refused instead.

mod capture;
pub(crate) mod git;
pub(crate) mod sandbox;
mod words;

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::OnceCell;
use workmate_protocol::ToolSpec;

use self::capture::Tail;
use self::sandbox::{Job, SAFE_PATH, ShellSandbox};
use crate::{Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolResult};
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
redirects, `;`, `&&`, variables ($X), globs (*) and `~` are refused (run `sh -c '...'` for \
those). The environment holds only PATH, HOME (the primary folder) and LANG. Commands run in a \
sandbox: a read-only system, the primary folder writable, an empty /tmp, usually no network. \
Output keeps the last 20,000 characters of each stream.";

/// `run_shell(command, timeout_seconds=120, description?)`.
#[derive(Clone, Debug, Default)]
pub struct RunShell {
    sandbox: ShellSandbox,
    /// Set once the sandbox has started successfully; a failed probe is retried on the next call
    /// (the operator may have fixed the host meanwhile).
    probed: Arc<OnceCell<()>>,
}

impl RunShell {
    /// A `run_shell` that isolates commands as `sandbox` says.
    pub fn new(sandbox: ShellSandbox) -> Self {
        Self {
            sandbox,
            probed: Arc::default(),
        }
    }
}

impl Tool for RunShell {
    fn spec(&self) -> ToolSpec {
        crate::args::spec::<RunShellArgs>("run_shell", DESCRIPTION)
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        Some(ToolMetadata::high("shell", "command"))
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = crate::args::parse::<RunShellArgs>("run_shell", arguments)?;
            self.run(ctx, args).await
        })
    }
}

/// Why a running program was stopped.
enum Stop {
    Timeout(u64),
    Cancelled,
}

impl RunShell {
    /// The command to spawn: the program itself, or the sandbox wrapping it.
    async fn command(
        &self,
        ctx: &ToolContext,
        argv: &[String],
        timeout: u64,
    ) -> Result<tokio::process::Command, ToolError> {
        let root = &ctx.roots[0];
        let sandbox = match &self.sandbox {
            ShellSandbox::None => {
                let mut command = tokio::process::Command::new(&argv[0]);
                command
                    .args(&argv[1..])
                    .current_dir(&root.path)
                    .env_clear()
                    .env("PATH", SAFE_PATH)
                    .env("HOME", &root.path)
                    .env("LANG", "C.UTF-8");
                return Ok(command);
            }
            ShellSandbox::Namespaces(sandbox) => sandbox,
        };
        self.probed
            .get_or_try_init(|| sandbox.probe())
            .await
            .map_err(ToolError::new)?;
        // Inside the sandbox a missing program would only show as the wrapper's exit code, so it
        // is looked up here, in the same system folders the sandbox mounts.
        if !argv[0].contains('/') && !on_safe_path(&argv[0]) {
            return Err(not_found(&argv[0], &root.path));
        }
        let prepare_root = root.clone();
        tokio::task::spawn_blocking(move || sandbox::prepare_root(&prepare_root))
            .await
            .map_err(|e| ToolError::new(format!("cannot prepare the sandbox: {e}")))?
            .map_err(ToolError::new)?;
        let job = Job {
            roots: &ctx.roots,
            argv,
            cpu_seconds: timeout,
            network: ctx.network,
            env: &[],
        };
        Ok(sandbox.command(&job))
    }

    async fn run(&self, ctx: &ToolContext, args: RunShellArgs) -> ToolResult {
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
        let mut command = self.command(ctx, &argv, timeout).await?;
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // Its own process group, so whatever it starts can be killed with it.
            .process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| match (&self.sandbox, e.kind()) {
                (ShellSandbox::Namespaces(sandbox), _) => ToolError::new(sandbox.spawn_error(&e)),
                (ShellSandbox::None, std::io::ErrorKind::NotFound) => {
                    not_found(program, &root.path)
                }
                (ShellSandbox::None, std::io::ErrorKind::PermissionDenied) => {
                    ToolError::new(format!("program '{program}' is not executable"))
                }
                (ShellSandbox::None, _) => ToolError::new(format!("cannot start '{program}': {e}")),
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
}

fn not_found(program: &str, folder: &Path) -> ToolError {
    ToolError::new(format!(
        "program '{program}' was not found (searched PATH={SAFE_PATH} from {})",
        folder.display()
    ))
}

/// Whether `name` is an executable file in one of the `PATH` folders.
fn on_safe_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    SAFE_PATH.split(':').any(|dir| {
        std::fs::metadata(Path::new(dir).join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}
