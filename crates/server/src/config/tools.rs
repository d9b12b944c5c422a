//! Validating `[tools]`: where session workspaces live and how `run_shell` is isolated.
//!
//! Invariant: the workspaces folder and the data directory never contain one another, so a
//! session's folder (the only place the exec sandbox may write) never holds the database or the
//! admin token, and the data directory never holds a workspace.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Where session workspaces live by default: next to the default data directory, not in it.
pub(crate) const DEFAULT_WORKSPACES_DIR: &str = "./workspaces";

/// `[tools]`, as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTools {
    pub(crate) workspaces_dir: Option<String>,
    pub(crate) shell_sandbox: Option<String>,
}

/// `[tools] shell_sandbox`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellSandboxMode {
    /// Every command in fresh namespaces under bubblewrap (the default); refused if it cannot
    /// start.
    Namespaces,
    /// No isolation; only when written explicitly.
    None,
}

impl ShellSandboxMode {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Namespaces => "namespaces",
            Self::None => "none",
        }
    }

    /// The tools' setting for this mode, with the default sandbox program and limits.
    pub fn sandbox(self) -> workmate_tools::ShellSandbox {
        match self {
            Self::Namespaces => workmate_tools::ShellSandbox::default(),
            Self::None => workmate_tools::ShellSandbox::None,
        }
    }
}

/// `[tools]`.
#[derive(Clone, Debug)]
pub struct ToolsSettings {
    /// `workspaces_dir`: the folder of session workspaces, `<dir>/<tenant>/<session>` (default
    /// `./workspaces`); never inside the data directory.
    pub workspaces_dir: PathBuf,
    /// `shell_sandbox`: `namespaces` (default) or `none`.
    pub shell_sandbox: ShellSandboxMode,
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_tools(
    raw: &RawTools,
    data_dir: &Path,
    invalid: Invalid<'_>,
) -> Result<ToolsSettings, ConfigError> {
    let dir = raw
        .workspaces_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKSPACES_DIR.to_owned());
    if dir.trim().is_empty() {
        return Err(invalid(
            "tools",
            "workspaces_dir",
            "the workspaces folder is empty".into(),
        ));
    }
    let workspaces_dir = PathBuf::from(dir);
    let (ws, data) = (normalized(&workspaces_dir), normalized(data_dir));
    if ws.starts_with(&data) || data.starts_with(&ws) {
        return Err(invalid(
            "tools",
            "workspaces_dir",
            format!(
                "{} and the data directory {} must not contain one another: commands run in a \
                 workspace must never see the database or the admin token; choose a folder \
                 outside the data directory",
                workspaces_dir.display(),
                data_dir.display()
            ),
        ));
    }
    let shell_sandbox = match raw.shell_sandbox.as_deref() {
        None | Some("namespaces") => ShellSandboxMode::Namespaces,
        Some("none") => ShellSandboxMode::None,
        Some(other) => {
            return Err(invalid(
                "tools",
                "shell_sandbox",
                format!("`{other}` is neither \"namespaces\" nor \"none\""),
            ));
        }
    };
    Ok(ToolsSettings {
        workspaces_dir,
        shell_sandbox,
    })
}

/// `path` made absolute (against the working directory) with `.` and `..` resolved lexically.
fn normalized(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(workspaces: &str, data: &str) -> Result<ToolsSettings, ConfigError> {
        let raw = RawTools {
            workspaces_dir: Some(workspaces.to_owned()),
            shell_sandbox: None,
        };
        let invalid = |section, key, problem| ConfigError::Invalid {
            section,
            key,
            origin: super::super::Source::Default,
            problem,
            how: String::new(),
        };
        validate_tools(&raw, Path::new(data), &invalid)
    }

    #[test]
    fn workspaces_never_overlap_the_data_directory() {
        assert!(check("./workspaces", "./data").is_ok());
        assert!(check("/srv/workspaces", "/srv/data").is_ok());
        assert!(check("./data/workspaces", "./data").is_err());
        assert!(check("data/../data/ws", "./data").is_err());
        assert!(check("/srv", "/srv/data").is_err());
        assert!(check("/srv/data", "/srv/data/").is_err());
    }
}
