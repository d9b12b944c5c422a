//! Checking and creating the data directory.
//!
//! Invariant: the directory is created only after its parent is known to be a writable directory,
//! and an existing one is accepted only if a file can be created in it; a failed check leaves the
//! file system as it was.

use std::fs;
use std::io;
use std::path::Path;

use crate::error::StartupError;

/// Makes sure `dir` is a writable directory, creating it (not its ancestors) if needed.
pub fn prepare(dir: &Path) -> Result<(), StartupError> {
    let fail = |reason: String| StartupError::DataDir {
        path: dir.to_owned(),
        reason,
    };
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            probe(dir).map_err(|e| fail(format!("cannot write in it ({e})")))
        }
        Ok(_) => Err(fail("it exists and is not a directory".into())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let parent = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            match fs::metadata(parent) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(fail(format!(
                        "its parent {} is not a directory",
                        parent.display()
                    )));
                }
                Err(e) => {
                    return Err(fail(format!(
                        "its parent {} is not usable ({e})",
                        parent.display()
                    )));
                }
            }
            probe(parent).map_err(|e| {
                fail(format!(
                    "cannot create it: its parent {} is not writable ({e})",
                    parent.display()
                ))
            })?;
            fs::create_dir(dir).map_err(|e| fail(format!("cannot create it ({e})")))
        }
        Err(e) => Err(fail(format!("cannot access it ({e})"))),
    }
}

/// Makes sure the session workspaces folder exists, creating it and its ancestors if needed, and
/// that no other user can list it: mode 0700, or 0711 when the server is root (the shell
/// sandbox's user must pass through it to the session folder it is given; it still cannot list
/// the folder or see other sessions' names).
pub fn prepare_workspaces(dir: &Path) -> Result<(), StartupError> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |reason: String| {
        StartupError::Usage(format!(
            "workspaces folder {} is not usable: {reason}; set [tools] workspaces_dir / \
             WORKMATE__TOOLS__WORKSPACES_DIR to a writable folder outside the data directory",
            dir.display()
        ))
    };
    fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it ({e})")))?;
    let root = fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    });
    let mode = if root { 0o711 } else { 0o700 };
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| fail(format!("cannot set its permissions ({e})")))?;
    probe(dir).map_err(|e| fail(format!("cannot write in it ({e})")))
}

/// Creates and removes a file in `dir`: the only reliable test of writability (permissions bits
/// do not account for root, ACLs or read-only mounts).
fn probe(dir: &Path) -> io::Result<()> {
    let path = dir.join(format!(".workmate-probe-{}", std::process::id()));
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    fs::remove_file(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_a_missing_directory_under_a_writable_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        prepare(&dir).unwrap();
        assert!(dir.is_dir());
        prepare(&dir).unwrap();
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "the probe file is removed"
        );
    }

    #[test]
    fn refuses_paths_under_a_file_and_creates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("afile"), b"x").unwrap();
        let err = prepare(&tmp.path().join("afile/data")).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let err = prepare(&tmp.path().join("missing/data")).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
