//! Whether a path a tool would write lands inside a writable root.
//!
//! Invariant: the path is resolved the way the file would be reached (relative to the primary
//! root, `~` expanded, `..` applied, symlinks of existing ancestors followed), so neither `..` nor
//! a symlink can make a path outside look inside.

use std::path::{Component, Path, PathBuf};

use workmate_tools::Root;

/// Whether writing `path` stays inside a writable root.
pub(crate) fn inside_writable_root(roots: &[Root], path: &str) -> bool {
    let Some(primary) = roots.first() else {
        return false;
    };
    if path.contains('\0') {
        return false;
    }
    let home_relative = if path == "~" {
        Some("")
    } else {
        path.strip_prefix("~/")
    };
    let expanded = match home_relative {
        Some(rest) => match std::env::var_os("HOME") {
            Some(home) => Path::new(&home).join(rest),
            None => return false,
        },
        None => PathBuf::from(path),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        primary.path.join(expanded)
    };
    let Some(resolved) = resolve(&joined) else {
        return false;
    };
    roots
        .iter()
        .filter(|r| r.writable)
        .any(|r| resolved.starts_with(&r.path))
}

/// Applies `..` lexically after following the symlinks of the deepest existing ancestor.
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    while existing.symlink_metadata().is_err() {
        tail.push(existing.file_name()?.to_owned());
        if !existing.pop() {
            return None;
        }
    }
    let mut resolved = existing.canonicalize().ok()?;
    for part in tail.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                resolved.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => resolved.push(part),
        }
    }
    Some(resolved)
}
