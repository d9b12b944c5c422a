//! The sandbox a persona clone's git runs in: the same exec sandbox as `run_shell`'s commands,
//! but with the network. The trait is the one the persona installer asks for (it lives here, with
//! the sandbox, so the installer depends on the tools and not the other way round).
//!
//! Invariant: the work folder is git's only writable view of the host; the folders it reads are
//! mounted read-only.

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use super::sandbox::{ShellSandbox, prepare_root};
use crate::Root;

/// What a [`GitSandbox`] answers: the command to run, or why it cannot run.
pub type SandboxedCommand<'a> =
    Pin<Box<dyn Future<Output = std::result::Result<tokio::process::Command, String>> + Send + 'a>>;

/// Where a clone's git runs.
pub trait GitSandbox: Send + Sync + fmt::Debug {
    /// The command running `argv` with `env` (besides `PATH`, `HOME` = `workdir` and `LANG`),
    /// whose only writable view of the host is `workdir`, which also sees `read_only`, and which
    /// reaches the network. `Err` says why the sandbox cannot start and what to do.
    fn git_command<'a>(
        &'a self,
        workdir: &'a Path,
        read_only: &'a [PathBuf],
        argv: &'a [String],
        env: &'a [(String, String)],
    ) -> SandboxedCommand<'a>;
}

impl GitSandbox for ShellSandbox {
    /// A persona clone's git, isolated as `run_shell`'s commands are but with the network: the
    /// work folder (made by the installer, handed to the sandbox user when the server is root)
    /// is its only writable view of the host.
    fn git_command<'a>(
        &'a self,
        workdir: &'a Path,
        read_only: &'a [PathBuf],
        argv: &'a [String],
        env: &'a [(String, String)],
    ) -> SandboxedCommand<'a> {
        Box::pin(async move {
            let work = Root {
                path: workdir.to_path_buf(),
                writable: true,
            };
            prepare_root(&work)?;
            let mut folders = vec![work];
            folders.extend(read_only.iter().map(|path| Root {
                path: path.clone(),
                writable: false,
            }));
            self.server_command(&folders, argv, env, true).await
        })
    }
}
