//! The Codex patch format, parsed into a plan of file operations before anything is touched:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (then `+line` lines)
//! *** Delete File: path
//! *** Update File: path     (optionally `*** Move to: path`, then hunks)
//! @@ optional context line
//!  context / -removed / +added
//! *** End of File           (optional: the hunk ends at the file's end)
//! *** End Patch
//! ```
//!
//! Invariant: parsing is total — any input yields a plan or an error naming the offending line,
//! never a panic.

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// One hunk of an update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// A line (from `@@ line`) that must occur before the hunk.
    pub(crate) context: Option<String>,
    pub(crate) old: Vec<String>,
    pub(crate) new: Vec<String>,
    /// The hunk must match at the end of the file.
    pub(crate) end_of_file: bool,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// Parses a whole patch.
pub(crate) fn parse(patch: &str) -> Result<Vec<Op>, String> {
    let lines: Vec<&str> = patch.trim().lines().collect();
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(format!("the patch must start with '{BEGIN}'"));
    }
    if lines.len() < 2 || lines.last().map(|l| l.trim()) != Some(END) {
        return Err(format!("the patch must end with '{END}'"));
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i];
        let number = i + 2;
        if let Some(path) = header(line, ADD) {
            i += 1;
            let mut content = String::new();
            while i < body.len() && !is_header(body[i]) {
                let Some(text) = body[i].strip_prefix('+') else {
                    return Err(format!(
                        "line {}: every line of an added file must start with '+'",
                        i + 2
                    ));
                };
                content.push_str(text);
                content.push('\n');
                i += 1;
            }
            ops.push(Op::Add { path, content });
        } else if let Some(path) = header(line, DELETE) {
            ops.push(Op::Delete { path });
            i += 1;
        } else if let Some(path) = header(line, UPDATE) {
            i += 1;
            let mut move_to = None;
            if let Some(dest) = body.get(i).and_then(|l| header(l, MOVE)) {
                move_to = Some(dest);
                i += 1;
            }
            let (chunks, next) = parse_chunks(body, i)?;
            if chunks.is_empty() && move_to.is_none() {
                return Err(format!(
                    "line {number}: '{path}' has an update with no hunks"
                ));
            }
            i = next;
            ops.push(Op::Update {
                path,
                move_to,
                chunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(format!(
                "line {number}: expected '{ADD}', '{DELETE}' or '{UPDATE}', found '{line}'"
            ));
        }
    }
    if ops.is_empty() {
        return Err("the patch changes no files".to_owned());
    }
    Ok(ops)
}

fn header(line: &str, prefix: &str) -> Option<String> {
    let path = line.strip_prefix(prefix)?.trim();
    (!path.is_empty()).then(|| path.to_owned())
}

fn is_header(line: &str) -> bool {
    [ADD, DELETE, UPDATE].iter().any(|p| line.starts_with(p))
}

/// The hunks of one update, from `start` to the next file header; returns them and where it
/// stopped.
fn parse_chunks(body: &[&str], start: usize) -> Result<(Vec<Chunk>, usize), String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<Chunk> = None;
    let mut i = start;
    while i < body.len() && !is_header(body[i]) {
        let line = body[i];
        let number = i + 2;
        if let Some(rest) = line.strip_prefix("@@") {
            if let Some(done) = current.take() {
                chunks.push(finished(done, number)?);
            }
            let rest = rest.trim();
            let context = rest.strip_suffix("@@").map_or(rest, str::trim);
            current = Some(Chunk {
                context: (!context.is_empty()).then(|| context.to_owned()),
                ..Chunk::default()
            });
        } else if line.trim() == EOF_MARK {
            let Some(chunk) = current.as_mut() else {
                return Err(format!("line {number}: '{EOF_MARK}' outside a hunk"));
            };
            chunk.end_of_file = true;
        } else {
            let chunk = current.get_or_insert_with(Chunk::default);
            match line.chars().next() {
                Some('+') => chunk.new.push(line[1..].to_owned()),
                Some('-') => chunk.old.push(line[1..].to_owned()),
                Some(' ') => {
                    chunk.old.push(line[1..].to_owned());
                    chunk.new.push(line[1..].to_owned());
                }
                None => {
                    chunk.old.push(String::new());
                    chunk.new.push(String::new());
                }
                Some(_) => {
                    return Err(format!(
                        "line {number}: a hunk line must start with ' ', '-' or '+', found '{line}'"
                    ));
                }
            }
        }
        i += 1;
    }
    if let Some(done) = current.take() {
        chunks.push(finished(done, i + 2)?);
    }
    Ok((chunks, i))
}

fn finished(chunk: Chunk, number: usize) -> Result<Chunk, String> {
    if chunk.old.is_empty() && chunk.new.is_empty() {
        return Err(format!("line {number}: empty hunk"));
    }
    Ok(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_operations() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n+world\n*** Delete File: b.txt\n\
                     *** Update File: c.txt\n*** Move to: d.txt\n@@ fn main\n line\n-old\n+new\n\
                     *** End of File\n*** End Patch\n";
        let ops = parse(patch).unwrap();
        assert_eq!(
            ops,
            vec![
                Op::Add {
                    path: "a.txt".into(),
                    content: "hello\nworld\n".into()
                },
                Op::Delete {
                    path: "b.txt".into()
                },
                Op::Update {
                    path: "c.txt".into(),
                    move_to: Some("d.txt".into()),
                    chunks: vec![Chunk {
                        context: Some("fn main".into()),
                        old: vec!["line".into(), "old".into()],
                        new: vec!["line".into(), "new".into()],
                        end_of_file: true,
                    }],
                },
            ]
        );
    }

    #[test]
    fn rejects_malformed_patches() {
        for bad in [
            "",
            "*** Begin Patch",
            "*** Begin Patch\n*** End Patch",
            "*** Add File: a\n+x\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\nx\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch",
            "*** Begin Patch\nnonsense\n*** End Patch",
            "*** Begin Patch\n*** End of File\n*** End Patch",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn first_hunk_may_omit_the_header() {
        let ops = parse("*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch").unwrap();
        let Op::Update { chunks, .. } = &ops[0] else {
            panic!("not an update")
        };
        assert_eq!(chunks[0].old, vec!["x"]);
        assert_eq!(chunks[0].new, vec!["y"]);
    }
}
