//! `read_file`: a line-numbered window of a text file inside the session's roots.
//!
//! Invariant: the file is streamed, so only the requested window (bounded per line and in total) is
//! held in memory, whatever the file's size; binary files and non-files are refused.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{SNIFF_BYTES, io_error, looks_binary};
use crate::args::simple_tool;
use crate::roots::{self, Access};
use crate::{ToolContext, ToolError, ToolMetadata, ToolResult};

const MAX_LINES_CAP: usize = 10_000;
const MAX_LINE_CHARS: usize = 2_000;
/// Bytes kept of one line: enough for `MAX_LINE_CHARS` characters of any width.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 4;
const MAX_OUTPUT_CHARS: usize = 200_000;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFileArgs {
    /// The file, relative to the primary folder or absolute inside one of the session's folders.
    path: String,
    /// The first line to show (1-based).
    #[serde(default = "one")]
    start_line: usize,
    /// How many lines to show at most (up to 10000).
    #[serde(default = "two_thousand")]
    max_lines: usize,
}

fn one() -> usize {
    1
}

fn two_thousand() -> usize {
    2000
}

const DESCRIPTION: &str = "Read a text file. Returns a window of lines, each prefixed with its \
line number and a tab, plus the file's total line count. Use start_line and max_lines to page \
through long files.";

simple_tool!(
    /// `read_file(path, start_line=1, max_lines=2000)`.
    ReadFile,
    "read_file",
    ReadFileArgs,
    DESCRIPTION,
    ToolMetadata::read("files"),
    run
);

async fn run(ctx: &ToolContext, args: ReadFileArgs) -> ToolResult {
    let path = roots::resolve(&ctx.roots, &args.path, Access::Read)?;
    let shown = roots::display(&ctx.roots, &path);
    let meta = tokio::fs::metadata(&path)
        .await
        .map_err(|e| io_error("read", &shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::new(format!(
            "'{shown}' is a folder, not a file; use list_files to see what it contains"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::new(format!("'{shown}' is not a regular file")));
    }
    let start = args.start_line.max(1);
    let max_lines = args.max_lines.clamp(1, MAX_LINES_CAP);

    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| io_error("read", &shown, &e))?;
    let mut reader = BufReader::new(file);
    let mut window = Window::new(start, max_lines);
    // The current line, capped: a file that is one giant line must not be held whole.
    let mut current: Vec<u8> = Vec::new();
    let mut seen = 0usize;
    loop {
        let buf = reader
            .fill_buf()
            .await
            .map_err(|e| io_error("read", &shown, &e))?;
        if buf.is_empty() {
            break;
        }
        if seen < SNIFF_BYTES && looks_binary(&buf[..buf.len().min(SNIFF_BYTES - seen)]) {
            return Err(ToolError::new(format!(
                "'{shown}' looks like a binary file; read_file shows text only"
            )));
        }
        let len = buf.len();
        let mut segments = buf.split(|b| *b == b'\n').peekable();
        while let Some(segment) = segments.next() {
            let room = MAX_LINE_BYTES.saturating_sub(current.len());
            current.extend_from_slice(&segment[..segment.len().min(room)]);
            if segments.peek().is_some() {
                window.push(&current);
                current.clear();
            }
        }
        seen = seen.saturating_add(len);
        reader.consume(len);
    }
    if !current.is_empty() {
        window.push(&current);
    }
    window.finish(&shown)
}

/// The lines kept from a pass over the file.
struct Window {
    start: usize,
    max_lines: usize,
    total: usize,
    content: String,
    shown: usize,
    cut_short: bool,
}

impl Window {
    fn new(start: usize, max_lines: usize) -> Self {
        Self {
            start,
            max_lines,
            total: 0,
            content: String::new(),
            shown: 0,
            cut_short: false,
        }
    }

    fn push(&mut self, raw: &[u8]) {
        self.total += 1;
        if self.total < self.start || self.shown >= self.max_lines || self.cut_short {
            return;
        }
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let lossy = String::from_utf8_lossy(raw);
        let mut chars = lossy.chars();
        let mut text: String = chars.by_ref().take(MAX_LINE_CHARS).collect();
        if chars.next().is_some() {
            text.push_str(" … [line truncated]");
        }
        if self.content.len() + text.len() > MAX_OUTPUT_CHARS {
            self.cut_short = true;
            return;
        }
        self.content
            .push_str(&format!("{:>6}\t{text}\n", self.total));
        self.shown += 1;
    }

    fn finish(self, shown_path: &str) -> ToolResult {
        if self.total > 0 && self.start > self.total {
            return Err(ToolError::new(format!(
                "start_line {} is past the end of '{shown_path}', which has {} lines",
                self.start, self.total
            )));
        }
        let end = if self.shown == 0 {
            self.start.saturating_sub(1)
        } else {
            self.start + self.shown - 1
        };
        let mut result = json!({
            "path": shown_path,
            "start_line": self.start,
            "end_line": end,
            "total_lines": self.total,
            "content": self.content,
        });
        if end < self.total {
            let why = if self.cut_short {
                "output size limit reached; "
            } else {
                ""
            };
            result["note"] = Value::String(format!(
                "{why}showing lines {}-{end} of {}; call again with start_line={} to continue",
                self.start,
                self.total,
                end + 1
            ));
        }
        Ok(result)
    }
}
