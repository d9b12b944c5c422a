//! Whether a path a tool would write lands inside a writable root, and whether a shell word a
//! read-only command gets stays inside the session's folders.
//!
//! Invariant: the path is resolved the way the file would be reached (relative to the primary
//! root, `~` expanded, `..` applied, symlinks of existing ancestors followed), so neither `..` nor
//! a symlink can make a path outside look inside.

use std::path::{Component, Path, PathBuf};

use workmate_tools::Root;

/// Whether a word of a read-only shell command stays inside the session's folders, taking every
/// word as a path a program might open (so a pattern that looks like an outside path costs a
/// prompt, never a read outside): relative to the primary root (where the shell tool runs), an
/// option's value after `=` (or from its first `/`, as in `-I/usr`) too. A word starting with `~`
/// (a home directory), or a dot-led glob component (which can match `..`), is outside.
pub(crate) fn word_inside_roots(roots: &[Root], word: &str) -> bool {
    let candidate = if word.starts_with('-') {
        match (word.split_once('='), word.find('/')) {
            (Some((_, value)), _) => value,
            (None, Some(slash)) => word.get(slash..).unwrap_or_default(),
            (None, None) => return true,
        }
    } else {
        word
    };
    if candidate.is_empty() {
        return true;
    }
    if candidate.starts_with('~')
        || candidate
            .split('/')
            .any(|c| c.starts_with('.') && c.contains(['*', '?', '[']))
    {
        return false;
    }
    inside_root(roots, candidate, false)
}

/// Whether writing `path` stays inside a writable root.
pub(crate) fn inside_writable_root(roots: &[Root], path: &str) -> bool {
    inside_root(roots, path, true)
}

/// Whether `path` resolves inside one of `roots` (only writable ones when `writable`).
fn inside_root(roots: &[Root], path: &str, writable: bool) -> bool {
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
        .filter(|r| r.writable || !writable)
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
