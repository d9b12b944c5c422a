//! Where a tool may touch the file system.
//!
//! Invariant: no path escapes the session's roots. A path is resolved the way the operating system
//! would follow it (symlinks and `..` included) before it is checked, so neither `..` components,
//! absolute paths nor symbolic links (dangling ones included) can reach outside; writes also need a
//! writable root.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use workmate_protocol::{SessionId, TenantId};

use crate::{Root, ToolError};

/// What the caller will do with the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read it.
    Read,
    /// Create, change or delete it.
    Write,
}

/// Resolves `path` against the session's roots: relative paths against the first root, absolute
/// ones as given. The result is absolute, with symlinks resolved for the part that exists, and lies
/// inside a root (a writable one for [`Access::Write`]); when roots nest, the innermost decides
/// whether writing is allowed.
pub fn resolve(roots: &[Root], path: &str, access: Access) -> Result<PathBuf, ToolError> {
    let Some(primary) = roots.first() else {
        return Err(ToolError::new("this session has no folders to work in"));
    };
    if path.contains('\0') {
        return Err(ToolError::new("the path contains a NUL character"));
    }
    let requested = Path::new(path);
    let joined = if requested.is_absolute() {
        requested.to_path_buf()
    } else {
        primary.path.join(requested)
    };
    let real = real_path(&joined).map_err(|why| {
        ToolError::new(format!(
            "cannot use path '{path}': {why}; {}",
            allowed(roots)
        ))
    })?;

    let root = roots
        .iter()
        .filter(|root| real.starts_with(&root.path))
        .max_by_key(|root| root.path.components().count());
    match root {
        None => Err(ToolError::new(format!(
            "path '{path}' is outside the session's folders; {}",
            allowed(roots)
        ))),
        Some(root) if access == Access::Write && !root.writable => Err(ToolError::new(format!(
            "path '{path}' is in a read-only folder ({}); {}",
            root.path.display(),
            allowed(roots)
        ))),
        Some(_) => Ok(real),
    }
}

/// The real location of `path`: the deepest existing ancestor canonicalized, plus the tail that does
/// not exist yet (which must be plain names, as nothing can resolve them yet).
fn real_path(path: &Path) -> Result<PathBuf, String> {
    let mut existing = path.to_path_buf();
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(real) => {
                let mut out = real;
                for name in tail.iter().rev() {
                    out.push(name);
                }
                return Ok(out);
            }
            Err(_) => {
                // Present but not resolvable: a dangling symlink (or a loop). Writing through it
                // would create its target, wherever that is.
                if std::fs::symlink_metadata(&existing).is_ok() {
                    return Err(format!(
                        "'{}' is a symbolic link that cannot be resolved",
                        existing.display()
                    ));
                }
                match existing.components().next_back() {
                    Some(Component::Normal(name)) => tail.push(name.to_os_string()),
                    Some(Component::CurDir) => {}
                    Some(Component::ParentDir) => {
                        return Err("'..' after a folder that does not exist".to_owned());
                    }
                    _ => return Err("no part of it exists".to_owned()),
                }
                if !existing.pop() {
                    return Err("no part of it exists".to_owned());
                }
            }
        }
    }
}

fn allowed(roots: &[Root]) -> String {
    let mut out = String::from("allowed folders: ");
    for (i, root) in roots.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let mode = if root.writable {
            "writable"
        } else {
            "read-only"
        };
        let _ = write!(out, "{} ({mode})", root.path.display());
    }
    out
}

/// How a resolved path is shown to the model: relative to the first root when inside it (the form
/// the model passes back), absolute otherwise.
pub fn display(roots: &[Root], path: &Path) -> String {
    if let Some(primary) = roots.first()
        && let Ok(relative) = path.strip_prefix(&primary.path)
    {
        let shown = relative.display().to_string();
        return if shown.is_empty() {
            ".".to_owned()
        } else {
            shown
        };
    }
    path.display().to_string()
}

/// A session's own working folder: `<workspaces_dir>/<tenant>/<session>`. Each id becomes one
/// path component by an injective escaping, so no id can name another tenant's folder.
pub fn session_workspace(workspaces_dir: &Path, tenant: &TenantId, session: &SessionId) -> PathBuf {
    workspaces_dir
        .join(component(tenant.as_str()))
        .join(component(session.as_str()))
}

fn component(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_workspace_escapes_ids() {
        let data = Path::new("/data/workspaces");
        let path = session_workspace(data, &TenantId::from("acme"), &SessionId::from("s-1"));
        assert_eq!(path, Path::new("/data/workspaces/acme/s-1"));
        let evil = session_workspace(data, &TenantId::from(".."), &SessionId::from("a/../../b"));
        assert_eq!(
            evil,
            Path::new("/data/workspaces/%2E%2E/a%2F%2E%2E%2F%2E%2E%2Fb")
        );
        assert_ne!(component("a_b"), component("a/b"));
        assert_eq!(component(""), "%");
    }

    #[test]
    fn no_roots_is_an_error() {
        let err = resolve(&[], "a", Access::Read).unwrap_err();
        assert!(err.message.contains("no folders"));
    }
}
