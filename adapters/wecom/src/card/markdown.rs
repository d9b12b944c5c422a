//! A card as WeCom markdown, the content of a smart robot's stream message.
//!
//! WeCom has two markdown dialects: the older `markdown` (headings, bold, italic, links, inline
//! code, quotes, `<font color>` and `<@userid>` mentions) and `markdown_v2`, which is what the
//! smart robot's messages show (adds lists, nested quotes, rules, code blocks and tables, but has
//! no colours or mentions). This renderer writes only what both show the same way: headings,
//! `**bold**`, `*italic*`, `[links](https://…)`, `` `inline code` `` and `>` quotes. So:
//!
//! - a muted line (status, notes) is a quote, not a grey `<font>`, which `markdown_v2` would
//!   show as raw text; no tag is ever written;
//! - a code block is a quote whose lines are each one inline code span, since fenced code does
//!   not render in the older dialect and inline code cannot span lines; leading spaces become
//!   no-break spaces so the indentation shows (a line inline code cannot hold is escaped text);
//! - a table is one line per row, cells between ` | `, the header row in bold;
//! - lists are `- ` / `1. ` lines (a list in `markdown_v2`, readable text in the older one), a
//!   rule is `---`, struck-through text is plain text;
//! - blocks are separated by a blank line, and lines inside a block end in two spaces (a hard
//!   line break), because `markdown_v2` joins single line breaks into one line.
//!
//! Buttons are not markdown: a turn's Stop button is left out (it is a template card of its own).
//!
//! Invariants: text reaches the output only through `inline` (see its docs for the escaping),
//! and every line carries its own markup (a quote marker, a list indent), so [`super::split_stream`]
//! can cut the text at any line break. Finally every `@all` (in any case) gets a word joiner after
//! its `@`, so no text of the card can notify a whole group.

use workmate_cards::{Block, Card};

use workmate_cards::md::{clean, field_lines, one_line, paragraph};

use super::inline::{self, code_span, escape};

/// The card as WeCom markdown (see the module docs); empty when nothing in it shows as text.
pub fn markdown(card: &Card) -> String {
    let blocks: Vec<String> = card.blocks.iter().filter_map(block).collect();
    defuse_mentions(&blocks.join("\n\n"))
}

fn block(block: &Block) -> Option<String> {
    let out = match block {
        Block::Heading { text } => {
            let text = one_line(text);
            (!text.is_empty()).then(|| format!("### {}", escape(&text, true)))?
        }
        Block::Text(text) => paragraph(&inline::lines(&text.0), ""),
        Block::Quote(text) => paragraph(&inline::lines(&text.0), "> "),
        Block::Context(inlines) => paragraph(&inline::lines(inlines), "> "),
        Block::Fields(fields) => paragraph(&field_lines(fields, escape), ""),
        Block::Code { text, .. } => paragraph(&code_lines(text), "> "),
        Block::Table { header, rows } => paragraph(&table_lines(header, rows), ""),
        Block::List { ordered, items } => list(*ordered, items),
        Block::Divider => "---".to_owned(),
        Block::Actions(_) => String::new(),
    };
    (!out.is_empty()).then_some(out)
}

/// One line of inline code per line of code (escaped text where inline code cannot hold it).
fn code_lines(text: &str) -> Vec<String> {
    clean(text)
        .split('\n')
        .map(|line| {
            let line = line.trim_end();
            code_span(line).unwrap_or_else(|| escape(line, true))
        })
        .collect()
}

/// The header row in bold, then one line per row; cells between ` | `.
fn table_lines(header: &[String], rows: &[Vec<String>]) -> Vec<String> {
    let row = |cells: &[String], bold: bool| {
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let cell = one_line(cell);
                match (cell.is_empty(), bold) {
                    (true, _) => String::new(),
                    (false, true) => format!("**{}**", escape(&cell, false)),
                    (false, false) => escape(&cell, i == 0),
                }
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let mut lines = Vec::new();
    if header.iter().any(|h| !h.trim().is_empty()) {
        lines.push(row(header, true));
    }
    lines.extend(rows.iter().map(|cells| row(cells, false)));
    lines
        .into_iter()
        .filter(|line| !line.replace('|', "").trim().is_empty())
        .collect()
}

/// `- item` or `1. item` lines; an item's further lines are indented under it.
fn list(ordered: bool, items: &[workmate_cards::RichText]) -> String {
    let items = items.iter().map(|item| inline::lines(&item.0));
    workmate_cards::md::list(ordered, items, "  ")
}

/// `text` with a word joiner after the `@` of every `@all`, so it reads the same but mentions no
/// one.
fn defuse_mentions(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in lower.match_indices("@all") {
        out.push_str(&text[last..=i]);
        out.push('\u{2060}');
        last = i + 1;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmate_cards::{Inline, RichText};

    fn text(s: &str) -> RichText {
        RichText(vec![Inline::Text(s.into())])
    }

    #[test]
    fn blocks_render_in_the_shared_subset() {
        let card = Card {
            blocks: vec![
                Block::Heading {
                    text: "# Deploys".into(),
                },
                Block::Text(text("a\n\n\nb\nc")),
                Block::Context(vec![Inline::Text("✅ Done".into())]),
                Block::Code {
                    language: Some("py".into()),
                    text: "def f():\n    return `x`\n\n".into(),
                },
                Block::List {
                    ordered: true,
                    items: vec![text("one\n   • nested"), text(" "), text("two")],
                },
                Block::Table {
                    header: vec!["k".into(), "v".into()],
                    rows: vec![vec!["-".into(), "a|b".into()], vec![]],
                },
                Block::Fields(vec![
                    ("Who".into(), "Bob".into()),
                    (String::new(), "x".into()),
                ]),
                Block::Divider,
            ],
        };
        assert_eq!(
            markdown(&card),
            "### \\# Deploys\n\n\
             a\n\nb  \nc\n\n\
             > ✅ Done\n\n\
             > `def f():`  \n> \u{a0}\u{a0}\u{a0}\u{a0}return \\`x\\`\n\n\
             1. one  \n  \u{a0}\u{a0}\u{a0}• nested\n2. two\n\n\
             **k** | **v**  \n\\- | a\\|b\n\n\
             **Who**: Bob  \nx\n\n\
             ---"
        );
    }

    #[test]
    fn mentions_of_everyone_are_defused() {
        assert_eq!(
            defuse_mentions("hi @All and @all!"),
            "hi @\u{2060}All and @\u{2060}all!"
        );
        assert_eq!(defuse_mentions("漢@all"), "漢@\u{2060}all");
    }
}
