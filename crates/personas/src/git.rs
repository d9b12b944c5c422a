//! Cloning a persona repository: git, run where `run_shell`'s commands run.
//!
//! A clone fetches what a tenant admin named, from a host the network policy accepted, so it is
//! treated like any command an admin asked for: it runs in the exec sandbox ([`GitSandbox`],
//! which the server backs with its `[tools] shell_sandbox`), whose only writable view of the host
//! is a fresh work folder (the checkout and git's `HOME`), with a `file://` repository mounted
//! read-only, the host's network (the https address pinned by the caller), and none of the
//! server's environment, configuration or keys.
//!
//! Invariants: git never prompts and never runs longer than [`CLONE_TIMEOUT`]; redirects and the
//! `ext::` transport are off; the work folder is created here, empty, and is the caller's to
//! remove.

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use workmate_tools::{GitSandbox, SandboxedCommand};

use crate::install::InstallPolicy;
use crate::{Error, Result};

/// How long a clone may take.
pub const CLONE_TIMEOUT: Duration = Duration::from_secs(60);

/// Clones `url` shallowly into `work/checkout` (creating `work`), git connecting to `pin`
/// (`host:port:address`) when given; the checkout's path.
pub(crate) async fn clone(
    url: &str,
    pin: Option<&str>,
    work: &Path,
    policy: &InstallPolicy,
) -> Result<PathBuf> {
    std::fs::create_dir(work)
        .map_err(|e| Error::Fetch(format!("cannot make a folder to clone {url} into: {e}")))?;
    let checkout = work.join("checkout");
    let mut argv: Vec<String> = [
        "git",
        "-c",
        "protocol.ext.allow=never",
        "-c",
        "http.followRedirects=false",
    ]
    .map(str::to_owned)
    .to_vec();
    if let Some(pin) = pin {
        argv.extend(["-c".to_owned(), format!("http.curloptResolve={pin}")]);
    }
    argv.extend(["clone", "--depth", "1", "--quiet", "--"].map(str::to_owned));
    argv.push(url.to_owned());
    argv.push(checkout.display().to_string());
    let env: Vec<(String, String)> = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_ASKPASS", "true"),
        (
            "GIT_SSH_COMMAND",
            "ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityFile=/dev/null",
        ),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .to_vec();
    // A `file://` repository is seen read-only, at its real path (under a root: checked).
    let read_only: Vec<PathBuf> = match url.strip_prefix("file://") {
        Some(path) => vec![policy.admit(Path::new(path))?],
        None => Vec::new(),
    };
    let mut command = match &policy.sandbox {
        Some(sandbox) => sandbox
            .git_command(work, &read_only, &argv, &env)
            .await
            .map_err(|why| Error::Fetch(format!("cannot clone {url} in the sandbox: {why}")))?,
        None => scrubbed(work, &argv, &env),
    };
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(CLONE_TIMEOUT, command.output())
        .await
        .map_err(|_| {
            Error::Fetch(format!(
                "cloning {url} took longer than {}s",
                CLONE_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| Error::Fetch(format!("cannot run git to clone {url}: {e}")))?;
    if output.status.success() {
        return Ok(checkout);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(Error::Fetch(format!(
        "cloning {url} failed: {}",
        stderr.trim().lines().last().unwrap_or("git gave no reason")
    )))
}

/// git as the server's user, with none of its environment (no sandbox was given).
fn scrubbed(work: &Path, argv: &[String], env: &[(String, String)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(work)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", work)
        .env("LANG", "C.UTF-8")
        .envs(env.iter().map(|(k, v)| (k, v)));
    command
}
