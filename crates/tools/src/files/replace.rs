//! `replace_in_file`: exact text replacement in one file inside a writable root.
//!
//! Invariant: the file changes only when the old text occurs (exactly `count` times, when given);
//! otherwise it is left byte-for-byte as it was.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{io_error, read_text};
use crate::args::simple_tool;
use crate::roots::{self, Access};
use crate::{ToolContext, ToolError, ToolMetadata, ToolResult};

/// Arguments of `replace_in_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplaceArgs {
    /// The file to edit.
    path: String,
    /// The exact text to replace (whitespace and line breaks included).
    old: String,
    /// The text to put in its place.
    new: String,
    /// How many occurrences are expected; the edit is refused if the file has a different number.
    /// Without it, every occurrence is replaced.
    #[serde(default)]
    count: Option<usize>,
}

const DESCRIPTION: &str = "Replace exact text in a file. `old` must match the file exactly \
(including indentation). Give `count` to state how many occurrences you expect (e.g. 1): the edit \
is refused if the file has a different number. Without `count`, all occurrences are replaced.";

simple_tool!(
    /// `replace_in_file(path, old, new, count?)`.
    ReplaceInFile,
    "replace_in_file",
    ReplaceArgs,
    DESCRIPTION,
    ToolMetadata::write_local("files", "path"),
    run
);

async fn run(ctx: &ToolContext, args: ReplaceArgs) -> ToolResult {
    if args.old.is_empty() {
        return Err(ToolError::new("`old` must not be empty"));
    }
    let path = roots::resolve(&ctx.roots, &args.path, Access::Write)?;
    let shown = roots::display(&ctx.roots, &path);
    let text = read_text(&path, &shown).await?;
    let found = text.matches(args.old.as_str()).count();
    if found == 0 {
        return Err(ToolError::new(format!(
            "the text to replace was not found in '{shown}'; read the file and copy the text \
             exactly, including whitespace"
        )));
    }
    if let Some(expected) = args.count
        && expected != found
    {
        return Err(ToolError::new(format!(
            "'{shown}' has {found} occurrence(s) of the text, but count is {expected}; nothing \
             was changed"
        )));
    }
    let updated = text.replace(args.old.as_str(), &args.new);
    tokio::fs::write(&path, updated)
        .await
        .map_err(|e| io_error("write", &shown, &e))?;
    Ok(json!({"path": shown, "replacements": found}))
}
