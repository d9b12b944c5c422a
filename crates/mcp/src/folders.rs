//! Which of the host's folders a stdio server may see: only what the operator put under
//! `[mcp] folder_roots`, never workmate's own state.
//!
//! Invariants: a folder is admitted only when its real path (symbolic links resolved) lies
//! inside one of the operator's roots and neither lies inside nor holds a protected folder (the
//! data folder, the workspaces folder, the configuration's folder); the real path is what is
//! stored and mounted, so a link changed later cannot widen what was admitted; with no roots
//! configured no folder is admitted at all.

use std::path::{Path, PathBuf};

use crate::definition::Folder;
use crate::{Error, Result};

/// The operator's roots and the folders no server may see.
#[derive(Clone, Debug, Default)]
pub struct FolderPolicy {
    roots: Vec<PathBuf>,
    protected: Vec<PathBuf>,
}

impl FolderPolicy {
    /// `roots` (`[mcp] folder_roots`) and the `protected` folders (workmate's data, workspaces
    /// and configuration folders), each resolved to its real path where it exists.
    pub fn new(roots: &[PathBuf], protected: &[PathBuf]) -> Self {
        Self {
            roots: roots.iter().map(|p| real(p)).collect(),
            protected: protected.iter().map(|p| real(p)).collect(),
        }
    }

    /// The folder as it is mounted (its real path), or why it may not be.
    pub fn admit(&self, folder: &Folder) -> Result<Folder> {
        let shown = folder.path.display();
        if !folder.path.is_absolute() {
            return Err(Error::Invalid(format!(
                "folder {shown} must be an absolute path"
            )));
        }
        if self.roots.is_empty() {
            return Err(Error::NotAllowed(format!(
                "folder {shown} cannot be given to an MCP server: the operator has allowed no \
                 folders ([mcp] folder_roots is empty); without folders a server gets only its \
                 own scratch folder"
            )));
        }
        let path = folder
            .path
            .canonicalize()
            .map_err(|e| Error::NotAllowed(format!("folder {shown} cannot be used: {e}")))?;
        if !path.is_dir() {
            return Err(Error::NotAllowed(format!("folder {shown} is not a folder")));
        }
        if !self.roots.iter().any(|root| path.starts_with(root)) {
            let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            return Err(Error::NotAllowed(format!(
                "folder {shown} is outside the folders the operator allows MCP servers to see \
                 ([mcp] folder_roots: {})",
                roots.join(", ")
            )));
        }
        if let Some(protected) = self
            .protected
            .iter()
            .find(|p| path.starts_with(p) || p.starts_with(&path))
        {
            return Err(Error::NotAllowed(format!(
                "folder {shown} cannot be given to an MCP server: it is or holds workmate's own \
                 state ({})",
                protected.display()
            )));
        }
        Ok(Folder {
            path,
            writable: folder.writable,
        })
    }

    /// Every folder of a definition, admitted.
    pub fn admit_all(&self, folders: &[Folder]) -> Result<Vec<Folder>> {
        folders.iter().map(|f| self.admit(f)).collect()
    }
}

/// `path` with its links resolved, or as given (made absolute against nothing) when it does not
/// exist yet.
fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(path: &Path) -> Folder {
        Folder {
            path: path.to_path_buf(),
            writable: false,
        }
    }

    #[test]
    fn only_folders_under_a_root_and_away_from_workmates_state_are_admitted() {
        let host = tempfile::tempdir().unwrap();
        let shared = host.path().join("shared");
        let reports = shared.join("reports");
        let data = shared.join("data");
        std::fs::create_dir_all(&reports).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        let elsewhere = host.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, reports.join("link")).unwrap();
        let policy = FolderPolicy::new(std::slice::from_ref(&shared), std::slice::from_ref(&data));

        let admitted = policy.admit(&folder(&reports)).unwrap();
        assert_eq!(admitted.path, reports.canonicalize().unwrap());
        for (path, why) in [
            (elsewhere, "outside"),
            (reports.join("link"), "outside"),
            (reports.join("../../elsewhere"), "outside"),
            (data, "workmate's own state"),
            (shared.clone(), "workmate's own state"),
            (PathBuf::from("/"), "outside"),
            (PathBuf::from("relative"), "absolute"),
            (shared.join("missing"), "cannot be used"),
        ] {
            let error = policy.admit(&folder(&path)).unwrap_err().to_string();
            assert!(error.contains(why), "{}: {error}", path.display());
        }
        let none = FolderPolicy::new(&[], &[]);
        let error = none.admit(&folder(&reports)).unwrap_err().to_string();
        assert!(error.contains("folder_roots is empty"), "{error}");
    }
}
