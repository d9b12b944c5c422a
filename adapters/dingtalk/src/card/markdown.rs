//! A card of the IR as DingTalk markdown: the `content` variable of the AI (answer) card, and the
//! approval card's `detail`.
//!
//! The AI card's markdown shows headings, bold, italic, strike-through, links, inline code, fenced
//! code, quotes, lists, rules and tables. So:
//!
//! - a muted line (status, notes) is a `>` quote;
//! - code is a fenced block whose fence is longer than any run of backticks in the code, so no
//!   line of it can close the block early; the language is kept only when it is a plain word;
//! - a table is a pipe table with every cell escaped (a `|` in a cell stays text);
//! - fields are `**Label**: value` lines; lists are `- ` / `1. ` lines;
//! - blocks are separated by a blank line, and lines inside a block end in two spaces (a hard
//!   line break).
//!
//! Buttons are not markdown: the Stop button and approval buttons belong to templates.
//!
//! Invariant: text reaches the output only through [`super::inline`] (escaped or inline code) or
//! inside a fenced block it cannot close, so model text cannot add markup; any input renders
//! without panicking.

use workmate_cards::{Block, Card, RichText};

use workmate_cards::md::{clean, field_lines, one_line, paragraph};

use super::inline::{self, escape};

/// The card as DingTalk markdown (see the module docs); empty when nothing in it shows as text.
pub fn markdown(card: &Card) -> String {
    markdown_blocks(&card.blocks)
}

pub(crate) fn markdown_blocks(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(block)
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn block(block: &Block) -> Option<String> {
    let out = match block {
        Block::Heading { text } => {
            let text = one_line(text);
            (!text.is_empty()).then(|| format!("### {}", escape(&text, false)))?
        }
        Block::Text(text) => paragraph(&inline::lines(&text.0), ""),
        Block::Quote(text) => paragraph(&inline::lines(&text.0), "> "),
        Block::Context(inlines) => paragraph(&inline::lines(inlines), "> "),
        Block::Fields(fields) => paragraph(&field_lines(fields, escape), ""),
        Block::Code { language, text } => fenced(language.as_deref(), text),
        Block::Table { header, rows } => table(header, rows),
        Block::List { ordered, items } => list(*ordered, items),
        Block::Divider => "---".to_owned(),
        Block::Actions(_) => String::new(),
    };
    (!out.is_empty()).then_some(out)
}

/// A fenced code block, its fence one backtick longer than the longest run in the code.
fn fenced(language: Option<&str>, text: &str) -> String {
    let text = clean(text);
    let text = text.trim_end_matches('\n');
    if text.trim().is_empty() {
        return String::new();
    }
    let longest = text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    let fence = "`".repeat(longest.max(2) + 1);
    let language = language
        .filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '+'))
        .unwrap_or_default();
    format!("{fence}{language}\n{text}\n{fence}")
}

fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let width = rows
        .iter()
        .map(Vec::len)
        .chain(std::iter::once(header.len()))
        .max()
        .unwrap_or_default();
    if width == 0 {
        return String::new();
    }
    let row = |cells: &[String]| {
        let cells: Vec<String> = (0..width)
            .map(|i| {
                cells
                    .get(i)
                    .map(|cell| escape(&one_line(cell), false))
                    .unwrap_or_default()
            })
            .collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut lines = vec![row(header), format!("|{}", " --- |".repeat(width))];
    lines.extend(rows.iter().map(|cells| row(cells)));
    lines.join("\n")
}

fn list(ordered: bool, items: &[RichText]) -> String {
    let items = items.iter().map(|item| inline::lines(&item.0));
    workmate_cards::md::list(ordered, items, "   ")
}
