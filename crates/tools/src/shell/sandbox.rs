//! The exec sandbox of `run_shell`: every command runs under bubblewrap in fresh user, mount, PID,
//! network, IPC and UTS namespaces, with resource limits, as an unprivileged user.
//!
//! Invariants:
//! - A command never runs unsandboxed unless the operator chose [`ShellSandbox::None`]; when the
//!   sandbox cannot start, the call is refused with the reason and the remedy.
//! - The sandbox sees a read-only system (`/usr` and the few `/etc` files programs need), a fresh
//!   `/proc` of its own PID namespace, an empty `/tmp`, and the session's roots — nothing else of
//!   the host: not the data directory, not the server's processes or environment.
//! - Nothing it starts outlives it: the sandbox's PID 1 ends when the command ends, which ends
//!   every process of the namespace, and `--die-with-parent` ends it if the server goes away.
//! - The limits apply to a non-root user: the kernel does not enforce `RLIMIT_NPROC` for root, so
//!   a server running as root first drops to [`SANDBOX_UID`] (with `setpriv`). The limits are set
//!   inside the sandbox (with `prlimit`), after the user namespace exists, so they count the
//!   sandbox's processes only, not every process of that user on the host.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::Root;

/// The user (and group) a root server runs sandboxed commands as: `nobody`.
pub const SANDBOX_UID: u32 = 65_534;

/// The `PATH` inside the sandbox (and of `none` commands).
pub(crate) const SAFE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Top-level folders that are either symlinks into `/usr` (merged `/usr`) or real folders of
/// system files; mirrored read-only.
const SYSTEM_DIRS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// The files of `/etc` that programs need to start, resolve names and check TLS certificates.
/// Nothing else of `/etc` is visible (no credentials, no service configuration).
const ETC_FILES: &[&str] = &[
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/resolv.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/mime.types",
];

/// How `run_shell` isolates the commands it runs (`[tools] shell_sandbox`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellSandbox {
    /// Fresh namespaces under bubblewrap, with limits (the default).
    Namespaces(Sandbox),
    /// No isolation: the command runs as the server's user, with a scrubbed environment only.
    /// Only when the operator wrote `shell_sandbox = "none"`.
    None,
}

impl Default for ShellSandbox {
    fn default() -> Self {
        Self::Namespaces(Sandbox::default())
    }
}

impl ShellSandbox {
    /// Runs `true` in the sandbox once: `Ok` with a one-line description of what is in effect, or
    /// `Err` with why commands would be refused and what to do.
    pub async fn probe(&self) -> Result<String, String> {
        match self {
            Self::None => Ok("none: shell commands run unsandboxed as the server's user \
                 ([tools] shell_sandbox = \"none\")"
                .to_owned()),
            Self::Namespaces(sandbox) => sandbox.probe().await.map(|()| sandbox.describe()),
        }
    }
}

/// The bubblewrap sandbox and its limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    /// The bubblewrap program (default `bwrap`, looked up in `/usr/local/bin:/usr/bin:/bin`).
    pub program: PathBuf,
    /// Processes (and threads) the command may have at once (`RLIMIT_NPROC`).
    pub max_processes: u64,
    /// Address space of each process, in bytes (`RLIMIT_AS`).
    pub max_memory_bytes: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub max_open_files: u64,
    /// Size of any one file it writes, in bytes (`RLIMIT_FSIZE`).
    pub max_file_bytes: u64,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self {
            program: PathBuf::from("bwrap"),
            max_processes: 256,
            max_memory_bytes: 4 << 30,
            max_open_files: 1024,
            max_file_bytes: 1 << 30,
        }
    }
}

/// One command to run in the sandbox.
pub(crate) struct Job<'a> {
    /// The roots to mount; the first is the working folder and `HOME`.
    pub(crate) roots: &'a [Root],
    /// The program and its arguments.
    pub(crate) argv: &'a [String],
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub(crate) cpu_seconds: u64,
    /// Whether the sandbox shares the host's network (else it has only its own loopback).
    pub(crate) network: bool,
    /// Variables set beside `PATH`, `HOME` and `LANG`.
    pub(crate) env: &'a [(String, String)],
}

/// CPU seconds a long-running server may use per process before the kernel stops it (a day).
const SERVER_CPU_SECONDS: u64 = 86_400;

impl ShellSandbox {
    /// The command that starts a long-running program (an MCP server) isolated as `run_shell`'s
    /// commands are: `folders` are its only view of the host's files (the first is its working
    /// folder and `HOME`; writable ones must already be the sandbox user's: their owner is never
    /// changed), `env`
    /// its only variables beside `PATH`, `HOME` and `LANG`. Stdin, stdout and stderr are left for
    /// the caller to set. `Err` says why the sandbox cannot start and what to do.
    pub async fn server_command(
        &self,
        folders: &[Root],
        argv: &[String],
        env: &[(String, String)],
        network: bool,
    ) -> Result<tokio::process::Command, String> {
        let Some(program) = argv.first() else {
            return Err("no program to run".to_owned());
        };
        let sandbox = match self {
            Self::None => {
                let home = folders
                    .first()
                    .map_or_else(std::env::temp_dir, |f| f.path.clone());
                let mut command = tokio::process::Command::new(program);
                command
                    .args(&argv[1..])
                    .current_dir(&home)
                    .env_clear()
                    .env("PATH", SAFE_PATH)
                    .env("HOME", &home)
                    .env("LANG", "C.UTF-8")
                    .envs(env.iter().map(|(k, v)| (k, v)));
                return Ok(command);
            }
            Self::Namespaces(sandbox) => sandbox,
        };
        sandbox.probe().await?;
        // The folders are the operator's, not workmate's: their owner is never changed. A
        // writable one must already belong to the sandbox user when the server runs as root.
        for folder in folders.iter().filter(|f| f.writable) {
            check_writable_by_sandbox(&folder.path)?;
        }
        let job = Job {
            roots: folders,
            argv,
            cpu_seconds: SERVER_CPU_SECONDS,
            network,
            env,
        };
        Ok(sandbox.command(&job))
    }
}

impl Sandbox {
    /// One line for logs and `workmate doctor`.
    pub fn describe(&self) -> String {
        let user = if running_as_root() {
            format!("uid {SANDBOX_UID}")
        } else {
            "the server's uid".to_owned()
        };
        format!(
            "namespaces: {} (user, mount, pid, net, ipc, uts) as {user}; at most {} processes, \
             {} MiB address space per process",
            self.program.display(),
            self.max_processes,
            self.max_memory_bytes >> 20
        )
    }

    /// Runs `true` in the sandbox, with no roots.
    pub(crate) async fn probe(&self) -> Result<(), String> {
        let argv = ["true".to_owned()];
        let job = Job {
            roots: &[],
            argv: &argv,
            cpu_seconds: 5,
            network: false,
            env: &[],
        };
        let mut command = self.command(&job);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let output = match tokio::time::timeout(Duration::from_secs(10), command.output()).await {
            Err(_) => return Err(self.unavailable("it did not finish within 10 s")),
            Ok(Err(e)) => return Err(self.spawn_error(&e)),
            Ok(Ok(output)) => output,
        };
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.trim();
        let why = if why.is_empty() {
            format!("it exited with {}", output.status)
        } else {
            why.to_owned()
        };
        Err(self.unavailable(&why))
    }

    /// The refusal when the sandbox program cannot be started.
    pub(crate) fn spawn_error(&self, e: &std::io::Error) -> String {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "{} was not found (searched PATH={SAFE_PATH}; install the bubblewrap package, \
                 and util-linux for setpriv and prlimit)",
                self.program.display()
            ),
            _ => format!("cannot start {}: {e}", self.program.display()),
        };
        self.unavailable(&why)
    }

    fn unavailable(&self, why: &str) -> String {
        format!(
            "the exec sandbox cannot start, so run_shell and stdio MCP servers are refused: {why}. Install bubblewrap \
             and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1 or \
             user.max_user_namespaces > 0; some distributions also restrict them with AppArmor), \
             or, to run commands without isolation, set [tools] shell_sandbox = \"none\""
        )
    }

    /// The wrapper command line:
    /// `[setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --] bwrap <namespaces,
    /// mounts, env> -- prlimit <limits> -- PROGRAM ARGS…`.
    pub(crate) fn command(&self, job: &Job<'_>) -> tokio::process::Command {
        let mut args: Vec<OsString> = Vec::new();
        let program: OsString = if running_as_root() {
            args.extend(
                [
                    format!("--reuid={SANDBOX_UID}"),
                    format!("--regid={SANDBOX_UID}"),
                    "--clear-groups".to_owned(),
                    "--no-new-privs".to_owned(),
                    "--".to_owned(),
                ]
                .map(OsString::from),
            );
            args.push(self.program.clone().into_os_string());
            "setpriv".into()
        } else {
            self.program.clone().into_os_string()
        };
        args.extend(self.bwrap_args(job));
        let mut command = tokio::process::Command::new(program);
        command.args(args).env_clear().env("PATH", SAFE_PATH);
        command
    }

    fn bwrap_args(&self, job: &Job<'_>) -> Vec<OsString> {
        let mut a = Args::default();
        a.flags(&[
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
        ]);
        if job.network {
            a.flags(&["--share-net"]);
        }
        a.mount("--ro-bind", "/usr", "/usr");
        for dir in SYSTEM_DIRS {
            match std::fs::read_link(dir) {
                Ok(target) => {
                    a.flags(&["--symlink"]);
                    a.path(&target);
                    a.flags(&[dir]);
                }
                Err(_) if Path::new(dir).is_dir() => a.mount("--ro-bind", dir, dir),
                Err(_) => {}
            }
        }
        for file in ETC_FILES {
            a.mount("--ro-bind-try", file, file);
        }
        a.flags(&[
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
        ]);
        for root in job.roots {
            let flag = if root.writable { "--bind" } else { "--ro-bind" };
            a.flags(&[flag]);
            a.path(&root.path);
            a.path(&root.path);
        }
        // The sandbox's own root (a tmpfs holding the mount points) is read-only too.
        a.flags(&["--remount-ro", "/"]);
        let home = job
            .roots
            .first()
            .map_or_else(|| PathBuf::from("/tmp"), |r| r.path.clone());
        a.flags(&["--chdir"]);
        a.path(&home);
        a.flags(&[
            "--clearenv",
            "--setenv",
            "PATH",
            SAFE_PATH,
            "--setenv",
            "HOME",
        ]);
        a.path(&home);
        a.flags(&["--setenv", "LANG", "C.UTF-8"]);
        for (name, value) in job.env {
            a.flags(&["--setenv", name, value]);
        }
        a.flags(&["--", "prlimit"]);
        a.0.extend(
            [
                format!("--nproc={}", self.max_processes),
                format!("--as={}", self.max_memory_bytes),
                format!("--nofile={}", self.max_open_files),
                format!("--fsize={}", self.max_file_bytes),
                format!("--cpu={}", job.cpu_seconds.max(1)),
                "--core=0".to_owned(),
                "--".to_owned(),
            ]
            .map(OsString::from),
        );
        a.0.extend(job.argv.iter().map(OsString::from));
        a.0
    }
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }
    fn path(&mut self, path: &Path) {
        self.0.push(path.as_os_str().to_owned());
    }
    fn mount(&mut self, flag: &str, source: &str, dest: &str) {
        self.flags(&[flag, source, dest]);
    }
}

/// Whether the server runs as root (the owner of `/proc/self` is the effective uid).
pub(crate) fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Refuses a folder a long-running server should write in but, as the sandbox user, could not:
/// when the server runs as root, the folder must belong to [`SANDBOX_UID`] already.
fn check_writable_by_sandbox(path: &Path) -> Result<(), String> {
    if !running_as_root() {
        return Ok(());
    }
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("folder {} cannot be used: {e}", path.display()))?;
    if meta.uid() == SANDBOX_UID {
        return Ok(());
    }
    Err(format!(
        "folder {} is writable for the server, but the sandbox user (uid {SANDBOX_UID}) does not \
         own it; workmate never changes the owner of a folder it did not create: run `chown -R \
         {SANDBOX_UID}:{SANDBOX_UID} {}` if the server should write there",
        path.display(),
        path.display()
    ))
}

/// Makes the primary root usable by [`SANDBOX_UID`] when the server is root: every folder above
/// it must be traversable, and what is in it is handed to that user (files linked from elsewhere,
/// with more than one hard link, are skipped: they could be a file outside the root).
pub(crate) fn prepare_root(root: &Root) -> Result<(), String> {
    if !running_as_root() || !root.writable {
        return Ok(());
    }
    for ancestor in root.path.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(ancestor) else {
            continue;
        };
        if meta.mode() & 0o001 == 0 && meta.uid() != SANDBOX_UID {
            return Err(format!(
                "the sandbox user (uid {SANDBOX_UID}) cannot reach {}: the folder {} is not \
                 traversable by other users (chmod o+x it, or move [tools] workspaces_dir)",
                root.path.display(),
                ancestor.display()
            ));
        }
    }
    // The session's folder is the sandbox user's alone (the server, as root, still reaches it).
    let handed = std::fs::set_permissions(&root.path, std::fs::Permissions::from_mode(0o700))
        .and_then(|()| hand_over(&root.path));
    handed.map_err(|e| {
        format!(
            "cannot prepare {} for the sandbox: {e}",
            root.path.display()
        )
    })
}

fn hand_over(dir: &Path) -> std::io::Result<()> {
    let id = Some(SANDBOX_UID);
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.uid() != SANDBOX_UID {
        std::os::unix::fs::lchown(dir, id, id)?;
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.is_dir() {
            hand_over(&path)?;
        } else if meta.uid() != SANDBOX_UID && (meta.is_symlink() || meta.nlink() == 1) {
            std::os::unix::fs::lchown(&path, id, id)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_hides_the_host_and_limits_the_command() {
        let sandbox = Sandbox::default();
        let roots = [Root {
            path: PathBuf::from("/w/acme/s1"),
            writable: true,
        }];
        let argv = ["ls".to_owned(), "-la".to_owned()];
        let job = Job {
            roots: &roots,
            argv: &argv,
            cpu_seconds: 7,
            network: false,
            env: &[],
        };
        let args: Vec<String> = sandbox
            .bwrap_args(&job)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let line = args.join(" ");
        assert!(
            line.starts_with("--unshare-all --unshare-user --disable-userns --die-with-parent")
        );
        assert!(!line.contains("--share-net"));
        assert!(line.contains("--ro-bind /usr /usr"));
        assert!(line.contains("--proc /proc --dev /dev --tmpfs /tmp"));
        assert!(
            line.contains(
                "--bind /w/acme/s1 /w/acme/s1 --remount-ro / --chdir /w/acme/s1 --clearenv"
            )
        );
        assert!(line.ends_with(
            "-- prlimit --nproc=256 --as=4294967296 --nofile=1024 --fsize=1073741824 --cpu=7 \
             --core=0 -- ls -la"
        ));
        assert!(!line.contains("/etc "), "only chosen files of /etc: {line}");

        let shared = sandbox.bwrap_args(&Job {
            network: true,
            ..job
        });
        assert!(shared.iter().any(|a| a == "--share-net"));
    }
}
