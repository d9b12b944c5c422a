//! Plain-text helpers for the fold, the card renderers and every platform's renderer, so that a
//! card's text is folded, cut and listed the same way on every platform.
//!
//! Invariants: every cut is on a `char` boundary and lengths are counted in `char`s; nothing here
//! escapes or knows a platform's markup. A platform whose limits count something else (Slack's
//! escaped entities, Feishu's JSON bytes) keeps its own cutting on top of these.

use crate::{Block, Card, Inline};

/// `text` with line breaks and runs of whitespace folded into single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters, ending in `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The marker in front of item `index` (from 0) of a list as plain text: `1. ` when ordered,
/// else `• `.
pub fn list_marker(ordered: bool, index: usize) -> String {
    if ordered {
        format!("{}. ", index + 1)
    } else {
        "• ".to_owned()
    }
}

/// The card's text without buttons or markup, in order: one entry per heading, paragraph, quote,
/// context line, field (`label: value`), code block, table row (cells between ` | `) and list
/// item (with its [`list_marker`]). An entry may hold line breaks or be blank; how it is cleaned,
/// split and filtered is the caller's (a notification text, a chat-list preview).
pub fn plain_lines(card: &Card) -> Vec<String> {
    let mut lines = Vec::new();
    for block in &card.blocks {
        match block {
            Block::Heading { text } => lines.push(text.clone()),
            Block::Text(text) | Block::Quote(text) => lines.push(text.plain()),
            Block::Context(inlines) => lines.push(inlines.iter().map(Inline::text).collect()),
            Block::Fields(fields) => lines.extend(fields.iter().map(|(label, value)| {
                match (label.trim(), value.trim()) {
                    ("", value) => value.to_owned(),
                    (label, "") => label.to_owned(),
                    (label, value) => format!("{label}: {value}"),
                }
            })),
            Block::Code { text, .. } => lines.push(text.clone()),
            Block::Table { header, rows } => {
                lines.extend(
                    std::iter::once(header)
                        .chain(rows)
                        .map(|row| row.join(" | ")),
                );
            }
            Block::List { ordered, items } => {
                lines.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| format!("{}{}", list_marker(*ordered, i), item.plain())),
                );
            }
            Block::Divider | Block::Actions(_) => {}
        }
    }
    lines
}

/// The first `max` lines of `text`, and how many lines were left out.
pub(crate) fn head_lines(text: &str, max: usize) -> (String, usize) {
    let total = text.lines().count();
    let head = text.lines().take(max).collect::<Vec<_>>().join("\n");
    (head, total.saturating_sub(max))
}

/// The files an `apply_patch` patch adds, updates or deletes, in order.
pub(crate) fn patch_files(patch: &str) -> Vec<&str> {
    patch
        .lines()
        .filter_map(|line| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                .iter()
                .find_map(|prefix| line.strip_prefix(prefix))
        })
        .map(str::trim)
        .collect()
}

/// A count with its noun, singular or plural: `1 line`, `3 lines`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Button, ButtonAction, ButtonStyle, RichText};

    #[test]
    fn cuts_respect_char_boundaries() {
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate("short", 5), "short");
        assert_eq!(one_line("a\n  b\tc "), "a b c");
        assert_eq!(head_lines("1\n2\n3", 2), ("1\n2".to_owned(), 1));
        assert_eq!(head_lines("1\n2", 5), ("1\n2".to_owned(), 0));
        assert_eq!(
            patch_files("*** Begin Patch\n*** Add File: a.txt\n+x\n*** Delete File: b\n"),
            ["a.txt", "b"]
        );
        assert_eq!(plural(1, "line"), "1 line");
        assert_eq!(plural(2, "line"), "2 lines");
        assert_eq!(list_marker(true, 0), "1. ");
        assert_eq!(list_marker(false, 4), "• ");
    }

    #[test]
    fn plain_lines_keep_text_and_leave_out_buttons() {
        let text = |t: &str| RichText(vec![Inline::Bold(t.into())]);
        let card = Card {
            blocks: vec![
                Block::Heading { text: "Run".into() },
                Block::Text(text("a\n\nb")),
                Block::Divider,
                Block::Fields(vec![
                    ("Tool".into(), "run_shell".into()),
                    (" ".into(), "only value".into()),
                ]),
                Block::Table {
                    header: vec!["k".into(), "v".into()],
                    rows: vec![vec!["x".into(), "1".into()]],
                },
                Block::List {
                    ordered: true,
                    items: vec![text("one"), text("two")],
                },
                Block::Actions(vec![Button {
                    label: "Stop".into(),
                    style: ButtonStyle::Danger,
                    action: ButtonAction::Stop {
                        session_id: "s".into(),
                        turn_id: "t".into(),
                    },
                }]),
                Block::Quote(text("")),
            ],
        };
        assert_eq!(
            plain_lines(&card),
            [
                "Run",
                "a\n\nb",
                "Tool: run_shell",
                "only value",
                "k | v",
                "x | 1",
                "1. one",
                "2. two",
                ""
            ]
        );
    }
}
