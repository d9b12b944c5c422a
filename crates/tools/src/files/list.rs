//! `list_files`: the entries of one folder inside the session's roots.
//!
//! Invariant: symbolic links are reported as links and never followed, so a listing shows nothing
//! outside the roots; at most `MAX_ENTRIES` entries are returned and the cut is always stated.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::io_error;
use crate::args::simple_tool;
use crate::roots::{self, Access};
use crate::{ToolContext, ToolError, ToolMetadata, ToolResult};

const MAX_ENTRIES: usize = 1000;

/// Arguments of `list_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListFilesArgs {
    /// The folder to list (default: the primary folder).
    #[serde(default = "dot")]
    path: String,
}

fn dot() -> String {
    ".".to_owned()
}

const DESCRIPTION: &str = "List the entries of a folder (not recursive): name, type (file, dir, \
symlink or other) and size in bytes for files, sorted by name.";

simple_tool!(
    /// `list_files(path=".")`.
    ListFiles,
    "list_files",
    ListFilesArgs,
    DESCRIPTION,
    ToolMetadata::read("files"),
    run
);

async fn run(ctx: &ToolContext, args: ListFilesArgs) -> ToolResult {
    let path = roots::resolve(&ctx.roots, &args.path, Access::Read)?;
    let shown = roots::display(&ctx.roots, &path);
    let meta = tokio::fs::metadata(&path)
        .await
        .map_err(|e| io_error("list", &shown, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::new(format!(
            "'{shown}' is not a folder; use read_file to read a file"
        )));
    }
    let mut reader = tokio::fs::read_dir(&path)
        .await
        .map_err(|e| io_error("list", &shown, &e))?;
    let mut entries: Vec<(String, &'static str, Option<u64>)> = Vec::new();
    while let Some(entry) = reader
        .next_entry()
        .await
        .map_err(|e| io_error("list", &shown, &e))?
    {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new("interrupted by user"));
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        // `DirEntry::metadata` does not follow symlinks.
        let (kind, size) = match entry.metadata().await {
            Ok(m) if m.is_symlink() => ("symlink", None),
            Ok(m) if m.is_dir() => ("dir", None),
            Ok(m) if m.is_file() => ("file", Some(m.len())),
            Ok(_) | Err(_) => ("other", None),
        };
        entries.push((name, kind, size));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let total = entries.len();
    let listed: Vec<Value> = entries
        .into_iter()
        .take(MAX_ENTRIES)
        .map(|(name, kind, size)| {
            let mut entry = json!({"name": name, "type": kind});
            if let Some(size) = size {
                entry["size"] = json!(size);
            }
            entry
        })
        .collect();
    let mut result = json!({"path": shown, "entries": listed, "total": total});
    if total > MAX_ENTRIES {
        result["note"] = Value::String(format!(
            "showing the first {MAX_ENTRIES} of {total} entries"
        ));
    }
    Ok(result)
}
