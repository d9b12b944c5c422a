//! `grep`: a line-by-line regular-expression (or literal) search through text files inside the
//! session's roots.
//!
//! Invariant: the walk never follows a symbolic link (to a file or a folder), so it cannot read
//! outside the roots or loop; version-control and dependency folders are skipped, binary and huge
//! files are skipped, and results stop at `max_results` with the cut stated. Patterns go through
//! the `regex` crate, whose matching is linear in the input (no backtracking blow-up), and both
//! the pattern length and the compiled size are capped, so a model-written pattern cannot stall
//! the search or exhaust memory.

use std::path::{Path, PathBuf};

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::glob::Glob;
use super::looks_binary;
use crate::args::simple_tool;
use crate::roots::{self, Access};
use crate::{Root, ToolContext, ToolError, ToolMetadata, ToolResult};

const MAX_RESULTS_CAP: usize = 1000;
const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
const MAX_TEXT_CHARS: usize = 300;
const MAX_PATTERN_CHARS: usize = 1000;
/// Caps on the compiled program and the lazy DFA cache, far above what a sane search needs.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const SKIP_DIRS: &[&str] = &[".git", ".hg", ".svn", "node_modules", "target"];

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    /// The regular expression to look for (Rust `regex` syntax, case-sensitive unless it starts
    /// with `(?i)`), matched against each line; with `fixed_strings`, literal text.
    pattern: String,
    /// Treat `pattern` as literal text rather than a regular expression.
    #[serde(default)]
    fixed_strings: bool,
    /// The folder or file to search (default: the primary folder).
    #[serde(default = "dot")]
    path: String,
    /// Only search files matching this glob, e.g. `*.rs`, `src/**/*.{ts,tsx}`.
    #[serde(default)]
    glob: Option<String>,
    /// How many matching lines to return at most (up to 1000).
    #[serde(default = "hundred")]
    max_results: usize,
}

fn dot() -> String {
    ".".to_owned()
}

fn hundred() -> usize {
    100
}

const DESCRIPTION: &str = "Search files line by line for a regular expression (Rust regex \
syntax: `\\d`, `\\w`, `[a-z]+`, `foo|bar`, `^`/`$`; no look-around or backreferences). \
Case-sensitive; start the pattern with `(?i)` to ignore case. Escape special characters such as \
`( [ . * + ? { |` with a backslash, or set fixed_strings to true to search for literal text. \
Searches recursively, skipping .git, node_modules and target folders, binary files and symbolic \
links. Each result is `path:line: text`.";

simple_tool!(
    /// `grep(pattern, fixed_strings=false, path=".", glob?, max_results=100)`.
    Grep,
    "grep",
    GrepArgs,
    DESCRIPTION,
    ToolMetadata::read("files"),
    run
);

async fn run(ctx: &ToolContext, args: GrepArgs) -> ToolResult {
    let matcher = Matcher::new(&args.pattern, args.fixed_strings)?;
    let start = roots::resolve(&ctx.roots, &args.path, Access::Read)?;
    let search = Search {
        matcher,
        glob: args.glob.as_deref().map(Glob::new),
        max: args.max_results.clamp(1, MAX_RESULTS_CAP),
        cancel: ctx.cancel.clone(),
        roots: ctx.roots.clone(),
        matches: Vec::new(),
        truncated: false,
    };
    let search = tokio::task::spawn_blocking(move || search.run(&start))
        .await
        .map_err(|e| ToolError::new(format!("search failed: {e}")))??;
    let mut result = json!({
        "pattern": args.pattern,
        "matches": search.matches,
        "count": search.matches.len(),
        "truncated": search.truncated,
    });
    if search.truncated {
        result["note"] = Value::String(format!(
            "stopped after {} results; narrow the path or glob, or raise max_results",
            search.max
        ));
    } else if search.matches.is_empty() {
        result["note"] = Value::String("no matches".to_owned());
    }
    Ok(result)
}

/// What a line must contain to match.
#[derive(Debug)]
enum Matcher {
    Literal(String),
    Regex(Regex),
}

impl Matcher {
    fn new(pattern: &str, fixed_strings: bool) -> Result<Self, ToolError> {
        if pattern.is_empty() {
            return Err(ToolError::new("pattern must not be empty"));
        }
        let chars = pattern.chars().count();
        if chars > MAX_PATTERN_CHARS {
            return Err(ToolError::new(format!(
                "pattern is {chars} characters long; the limit is {MAX_PATTERN_CHARS}"
            )));
        }
        if fixed_strings {
            return Ok(Self::Literal(pattern.to_owned()));
        }
        RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Self::Regex)
            .map_err(|e| invalid_pattern(pattern, &e))
    }

    fn is_match(&self, line: &str) -> bool {
        match self {
            Self::Literal(needle) => line.contains(needle.as_str()),
            Self::Regex(regex) => regex.is_match(line),
        }
    }
}

/// A one-line account of why `pattern` was refused, with the way out.
fn invalid_pattern(pattern: &str, error: &regex::Error) -> ToolError {
    let problem = match error {
        // The syntax message draws a caret diagram under the pattern; its last line names the
        // problem ("error: unclosed group"), which is what the model needs.
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find_map(|line| line.trim().strip_prefix("error: "))
            .unwrap_or(text)
            .to_owned(),
        regex::Error::CompiledTooBig(limit) => format!(
            "it compiles to more than {limit} bytes; use smaller repetition counts or fewer \
             alternatives"
        ),
        other => other.to_string(),
    };
    ToolError::new(format!(
        "invalid regular expression `{pattern}`: {problem} — escape special characters such as \
         ( [ . * with a backslash for a literal match, or set fixed_strings to true"
    ))
}

#[derive(Debug)]
struct Search {
    matcher: Matcher,
    glob: Option<Glob>,
    max: usize,
    cancel: CancellationToken,
    roots: Vec<Root>,
    matches: Vec<String>,
    truncated: bool,
}

impl Search {
    fn run(mut self, start: &Path) -> Result<Self, ToolError> {
        let meta = std::fs::metadata(start)
            .map_err(|e| super::io_error("search", &roots::display(&self.roots, start), &e))?;
        if meta.is_file() {
            self.file(start);
            return Ok(self);
        }
        let mut stack: Vec<PathBuf> = vec![start.to_path_buf()];
        while let Some(dir) = stack.pop() {
            if self.cancel.is_cancelled() {
                return Err(ToolError::new("interrupted by user"));
            }
            let Ok(reader) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = reader.filter_map(Result::ok).collect();
            entries.sort_by_key(std::fs::DirEntry::file_name);
            let mut subdirs = Vec::new();
            for entry in entries {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if kind.is_dir() {
                    let name = entry.file_name();
                    if !SKIP_DIRS.iter().any(|skip| name == *skip) {
                        subdirs.push(path);
                    }
                } else if kind.is_file() {
                    let relative = path.strip_prefix(start).unwrap_or(&path);
                    let relative = relative.to_string_lossy().replace('\\', "/");
                    if self.glob.as_ref().is_none_or(|g| g.matches(&relative)) {
                        self.file(&path);
                    }
                }
                if self.truncated {
                    return Ok(self);
                }
            }
            // Depth first, in name order.
            stack.extend(subdirs.into_iter().rev());
        }
        Ok(self)
    }

    fn file(&mut self, path: &Path) {
        let too_big = std::fs::metadata(path).map_or(true, |m| m.len() > MAX_FILE_BYTES);
        if too_big {
            return;
        }
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        if looks_binary(&bytes) {
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        let shown = roots::display(&self.roots, path);
        for (index, line) in text.lines().enumerate() {
            if !self.matcher.is_match(line) {
                continue;
            }
            if self.matches.len() >= self.max {
                self.truncated = true;
                return;
            }
            let mut chars = line.chars();
            let mut excerpt: String = chars.by_ref().take(MAX_TEXT_CHARS).collect();
            if chars.next().is_some() {
                excerpt.push('…');
            }
            self.matches
                .push(format!("{shown}:{}: {excerpt}", index + 1));
        }
    }
}
