//! `apply_patch`: applies a Codex-format patch to files inside writable roots.
//!
//! Invariant: all or nothing. The whole patch is parsed, every path resolved (writable roots only)
//! and every hunk matched in memory first; only then are files written, and if a write fails the
//! files already written are restored to their previous content.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::patch_parse::{Chunk, Op, parse};
use super::read_text;
use crate::args::simple_tool;
use crate::roots::{self, Access};
use crate::{ToolContext, ToolError, ToolMetadata, ToolResult};

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApplyPatchArgs {
    /// The patch text, from `*** Begin Patch` to `*** End Patch`.
    patch: String,
}

const DESCRIPTION: &str = "Apply a patch that adds, updates, moves or deletes files. Format:\n\
*** Begin Patch\n*** Add File: path\n+new line\n*** Update File: path\n*** Move to: new/path \
(optional)\n@@ a line just above the change (optional)\n context line\n-removed line\n+added \
line\n*** Delete File: path\n*** End Patch\nContext lines start with a space. The patch is \
applied completely or not at all.";

simple_tool!(
    /// `apply_patch(patch)`.
    ApplyPatch,
    "apply_patch",
    ApplyPatchArgs,
    DESCRIPTION,
    ToolMetadata::write_local("files", "patch"),
    run
);

async fn run(ctx: &ToolContext, args: ApplyPatchArgs) -> ToolResult {
    let ops = parse(&args.patch).map_err(|e| ToolError::new(format!("invalid patch: {e}")))?;
    let mut plan = Plan::default();
    for op in ops {
        plan.add(ctx, op).await?;
    }
    plan.commit().await?;
    Ok(json!({"applied": true, "changes": plan.summary}))
}

/// The files' final states (`None` = deleted), computed before anything is written.
#[derive(Debug, Default)]
struct Plan {
    states: BTreeMap<PathBuf, Option<String>>,
    summary: Vec<String>,
}

impl Plan {
    async fn current(&self, path: &Path, shown: &str) -> Result<Option<String>, ToolError> {
        if let Some(state) = self.states.get(path) {
            return Ok(state.clone());
        }
        match tokio::fs::symlink_metadata(path).await {
            Ok(_) => read_text(path, shown).await.map(Some),
            Err(_) => Ok(None),
        }
    }

    async fn add(&mut self, ctx: &ToolContext, op: Op) -> Result<(), ToolError> {
        match op {
            Op::Add { path, content } => {
                let (real, shown) = target(ctx, &path)?;
                if self.current(&real, &shown).await?.is_some() {
                    return Err(ToolError::new(format!(
                        "cannot add '{shown}': it already exists (use *** Update File)"
                    )));
                }
                self.states.insert(real, Some(content));
                self.summary.push(format!("A {shown}"));
            }
            Op::Delete { path } => {
                let (real, shown) = target(ctx, &path)?;
                if self.current(&real, &shown).await?.is_none() {
                    return Err(ToolError::new(format!(
                        "cannot delete '{shown}': no such file"
                    )));
                }
                self.states.insert(real, None);
                self.summary.push(format!("D {shown}"));
            }
            Op::Update {
                path,
                move_to,
                chunks,
            } => {
                let (real, shown) = target(ctx, &path)?;
                let Some(text) = self.current(&real, &shown).await? else {
                    return Err(ToolError::new(format!(
                        "cannot update '{shown}': no such file"
                    )));
                };
                let updated = apply_chunks(&text, &chunks)
                    .map_err(|e| ToolError::new(format!("cannot update '{shown}': {e}")))?;
                match move_to {
                    Some(dest) => {
                        let (dest_real, dest_shown) = target(ctx, &dest)?;
                        if dest_real != real
                            && self.current(&dest_real, &dest_shown).await?.is_some()
                        {
                            return Err(ToolError::new(format!(
                                "cannot move '{shown}' to '{dest_shown}': it already exists"
                            )));
                        }
                        self.states.insert(real, None);
                        self.states.insert(dest_real, Some(updated));
                        self.summary.push(format!("M {shown} -> {dest_shown}"));
                    }
                    None => {
                        self.states.insert(real, Some(updated));
                        self.summary.push(format!("M {shown}"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes every state; on failure restores what was already changed.
    async fn commit(&self) -> Result<(), ToolError> {
        let mut originals: Vec<(&Path, Option<Vec<u8>>)> = Vec::new();
        for (path, state) in &self.states {
            let original = tokio::fs::read(path).await.ok();
            let done = match state {
                Some(content) => write(path, content).await,
                None => tokio::fs::remove_file(path).await,
            };
            originals.push((path, original));
            if let Err(e) = done {
                for (path, original) in originals.iter().rev() {
                    let _ = match original {
                        Some(bytes) => tokio::fs::write(path, bytes).await,
                        None => tokio::fs::remove_file(path).await,
                    };
                }
                return Err(ToolError::new(format!(
                    "writing '{}' failed ({e}); the files already changed were restored",
                    path.display()
                )));
            }
        }
        Ok(())
    }
}

fn target(ctx: &ToolContext, path: &str) -> Result<(PathBuf, String), ToolError> {
    let real = roots::resolve(&ctx.roots, path, Access::Write)?;
    let shown = roots::display(&ctx.roots, &real);
    Ok((real, shown))
}

async fn write(path: &Path, content: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await?;
    }
    tokio::fs::write(path, content).await
}

/// Applies hunks to a file's text, matching each after the previous one.
pub(crate) fn apply_chunks(text: &str, chunks: &[Chunk]) -> Result<String, String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut cursor = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.context {
            let Some(at) = seek(&lines, std::slice::from_ref(context), cursor, false) else {
                return Err(format!("the context line '{context}' was not found"));
            };
            cursor = at + 1;
        }
        if chunk.old.is_empty() {
            let at = if chunk.context.is_some() {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, chunk.new.clone()));
            continue;
        }
        let (mut old, mut new) = (&chunk.old[..], &chunk.new[..]);
        let mut found = seek(&lines, old, cursor, chunk.end_of_file);
        // A trailing empty line in the hunk often stands for the file's final newline.
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = seek(&lines, old, cursor, chunk.end_of_file);
        }
        let Some(at) = found else {
            return Err(format!(
                "these lines were not found (read the file again and copy them exactly):\n{}",
                chunk.old.join("\n")
            ));
        };
        replacements.push((at, old.len(), new.to_vec()));
        cursor = at + old.len();
    }
    replacements.sort_by_key(|r| r.0);
    for (at, len, new) in replacements.into_iter().rev() {
        lines.splice(at..at + len, new);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Where `pattern` occurs in `lines` at or after `start`: exactly, then ignoring trailing
/// whitespace, then ignoring surrounding whitespace. With `at_end`, the end of the file is tried
/// first.
fn seek(lines: &[String], pattern: &[String], start: usize, at_end: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let first = if at_end { last } else { start };
    let compare: [fn(&str, &str) -> bool; 3] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
    ];
    for eq in compare {
        for i in first.max(start)..=last {
            if pattern.iter().zip(&lines[i..]).all(|(p, l)| eq(l, p)) {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(context: Option<&str>, old: &[&str], new: &[&str]) -> Chunk {
        Chunk {
            context: context.map(str::to_owned),
            old: old.iter().map(|s| (*s).to_owned()).collect(),
            new: new.iter().map(|s| (*s).to_owned()).collect(),
            end_of_file: false,
        }
    }

    #[test]
    fn applies_hunks_in_order() {
        let text = "a\nb\nc\nb\nd\n";
        let out = apply_chunks(text, &[chunk(Some("c"), &["b"], &["B"])]).unwrap();
        assert_eq!(out, "a\nb\nc\nB\nd\n");
        let out = apply_chunks(
            text,
            &[chunk(None, &["a"], &["x", "y"]), chunk(None, &["d"], &[])],
        )
        .unwrap();
        assert_eq!(out, "x\ny\nb\nc\nb\n");
    }

    #[test]
    fn tolerates_trailing_whitespace_and_reports_misses() {
        let out = apply_chunks(
            "fn a() {   \n}\n",
            &[chunk(None, &["fn a() {"], &["fn b() {"])],
        );
        assert_eq!(out.unwrap(), "fn b() {\n}\n");
        let miss = apply_chunks("a\n", &[chunk(None, &["zzz"], &["y"])]).unwrap_err();
        assert!(miss.contains("zzz"));
    }

    #[test]
    fn pure_additions_append_or_follow_the_context() {
        assert_eq!(
            apply_chunks("a\n", &[chunk(None, &[], &["b"])]).unwrap(),
            "a\nb\n"
        );
        assert_eq!(
            apply_chunks("a\nc\n", &[chunk(Some("a"), &[], &["b"])]).unwrap(),
            "a\nb\nc\n"
        );
    }
}
