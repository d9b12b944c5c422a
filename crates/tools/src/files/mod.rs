//! File tools. Every one resolves its paths through [`crate::roots::resolve`] before touching the
//! file system, so no file tool reads or writes outside the session's roots.

mod glob;
pub(crate) mod grep;
pub(crate) mod list;
pub(crate) mod patch;
mod patch_parse;
pub(crate) mod read;
pub(crate) mod replace;
pub(crate) mod write;

use std::io;

use crate::ToolError;

/// How much of a file's start is inspected to tell text from binary.
const SNIFF_BYTES: usize = 8192;

/// Whether bytes look like a binary file (a NUL byte near the start, as git and ripgrep judge).
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(SNIFF_BYTES).any(|b| *b == 0)
}

/// An I/O failure as the model should read it.
pub(crate) fn io_error(action: &str, shown: &str, error: &io::Error) -> ToolError {
    let why = match error.kind() {
        io::ErrorKind::NotFound => "it does not exist".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    };
    ToolError::new(format!("cannot {action} '{shown}': {why}"))
}

/// Reads a whole text file for editing: refuses directories, binary files and invalid UTF-8.
pub(crate) async fn read_text(path: &std::path::Path, shown: &str) -> Result<String, ToolError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| io_error("read", shown, &e))?;
    if !meta.is_file() {
        return Err(ToolError::new(format!("'{shown}' is not a regular file")));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| io_error("read", shown, &e))?;
    if looks_binary(&bytes) {
        return Err(ToolError::new(format!(
            "'{shown}' looks like a binary file"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| ToolError::new(format!("'{shown}' is not valid UTF-8 text")))
}
