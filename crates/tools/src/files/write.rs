//! `write_file`: creates or replaces a file inside a writable root.
//!
//! Invariant: the target and every folder created for it lie inside a writable root (the resolved
//! tail below the deepest existing folder is plain names only); with `overwrite=false` an existing
//! file is never touched, checked atomically by the open itself.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::io_error;
use crate::args::simple_tool;
use crate::roots::{self, Access};
use crate::{ToolContext, ToolError, ToolMetadata, ToolResult};

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFileArgs {
    /// The file to write, relative to the primary folder or absolute inside a writable folder.
    path: String,
    /// The complete new content of the file.
    content: String,
    /// Whether to replace the file if it exists (default true).
    #[serde(default = "yes")]
    overwrite: bool,
}

fn yes() -> bool {
    true
}

const DESCRIPTION: &str = "Write a whole file, creating it and any missing parent folders. \
Replaces an existing file unless overwrite is false. For small edits prefer replace_in_file or \
apply_patch.";

simple_tool!(
    /// `write_file(path, content, overwrite=true)`.
    WriteFile,
    "write_file",
    WriteFileArgs,
    DESCRIPTION,
    ToolMetadata::write_local("files", "path"),
    run
);

async fn run(ctx: &ToolContext, args: WriteFileArgs) -> ToolResult {
    let path = roots::resolve(&ctx.roots, &args.path, Access::Write)?;
    let shown = roots::display(&ctx.roots, &path);
    let existed = match tokio::fs::metadata(&path).await {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::new(format!("'{shown}' is a folder")));
        }
        Ok(_) if !args.overwrite => {
            return Err(ToolError::new(format!(
                "'{shown}' already exists and overwrite is false"
            )));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| io_error("create the folder for", &shown, &e))?;
    }
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true);
    if args.overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(&path).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            ToolError::new(format!("'{shown}' already exists and overwrite is false"))
        } else {
            io_error("write", &shown, &e)
        }
    })?;
    file.write_all(args.content.as_bytes())
        .await
        .map_err(|e| io_error("write", &shown, &e))?;
    file.flush()
        .await
        .map_err(|e| io_error("write", &shown, &e))?;
    Ok(json!({
        "path": shown,
        "bytes_written": args.content.len(),
        "created": !existed,
    }))
}
