//! IR blocks as the pieces of a card body, in order.
//!
//! Invariant: one non-empty block is one body element (a button row is one `column_set`), so the
//! same card shape always gives the same elements and a growing answer only changes the content
//! of its last markdown elements. Blocks with nothing to show give no element.

use serde_json::{Value, json};
use workmate_cards::text::truncate;
use workmate_cards::{Block, Inline};

use super::buttons::{self, MAX_BUTTONS, Row};
use super::inline;
use super::markdown::{Markdown, Part};
use super::table::{self, Table};
use super::text::one_line;
use super::{MAX_HEADER_CHARS, MAX_TABLES};

/// One body element before it is fitted into the card.
#[derive(Debug)]
pub(crate) enum Piece {
    /// Text, which can be cut to fit.
    Markdown(Markdown),
    /// A table, whose rows can be cut to fit.
    Table(Table),
    /// An element kept as it is (a rule, a note).
    Fixed(Value),
    /// A row of buttons: never cut, never dropped.
    Buttons(Row),
}

/// The pieces of `blocks`, in order.
pub(crate) fn pieces(blocks: &[Block]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut tables = 0;
    let mut buttons_room = MAX_BUTTONS;
    for block in blocks {
        match block {
            Block::Actions(list) => {
                let (row, left_out) = buttons::row(list, &mut buttons_room);
                out.extend(row.map(Piece::Buttons));
                if left_out > 0 {
                    out.push(Piece::Fixed(note(&buttons::left_out_note(left_out))));
                }
            }
            Block::Divider => out.push(Piece::Fixed(json!({ "tag": "hr" }))),
            Block::Table { header, rows } if tables < MAX_TABLES => {
                if let Some(table) = Table::new(header, rows) {
                    tables += 1;
                    out.push(Piece::Table(table));
                }
            }
            Block::Table { header, rows } => {
                out.extend(table::as_code(header, rows).map(Piece::Markdown));
            }
            other => {
                let markdown = markdown(other);
                if !markdown.is_empty() {
                    out.push(Piece::Markdown(markdown));
                }
            }
        }
    }
    out
}

/// A small grey line written by the renderer (its text needs no escaping).
pub(crate) fn note(text: &str) -> Value {
    json!({
        "tag": "markdown",
        "content": format!("<font color='grey'>{text}</font>"),
        "text_size": "notation",
    })
}

/// A block shown as one markdown element.
fn markdown(block: &Block) -> Markdown {
    let mut md = Markdown::default();
    let parts = &mut md.parts;
    match block {
        Block::Heading { text } => {
            md.text_size = Some("heading");
            let text = truncate(&one_line(text), MAX_HEADER_CHARS);
            parts.push(Part::styled("**", &text, "**"));
        }
        Block::Text(text) => inline::parts(parts, &text.0, ""),
        Block::Quote(text) => {
            parts.push(Part::Markup("> ".into()));
            inline::parts(parts, &text.0, "> ");
        }
        Block::Context(inlines) => {
            md.text_size = Some("notation");
            md.open = "<font color='grey'>";
            md.close = "</font>";
            inline::parts(parts, inlines, "");
        }
        Block::Fields(fields) => {
            let fields = fields
                .iter()
                .filter(|(label, value)| !label.trim().is_empty() || !value.trim().is_empty());
            for (i, (label, value)) in fields.enumerate() {
                if i > 0 {
                    parts.push(Part::Markup("\n".into()));
                }
                let label = one_line(label);
                if !label.is_empty() {
                    parts.push(Part::styled("**", &label, "**"));
                }
                if !label.is_empty() && !value.trim().is_empty() {
                    parts.push(Part::Markup(": ".into()));
                }
                inline::parts(parts, &[Inline::Text(value.trim().to_owned())], "");
            }
        }
        Block::Code { language, text } => {
            if !text.trim().is_empty() {
                let fence = format!("```{}\n", language.as_deref().map_or("", fence_language));
                parts.push(Part::code(&fence, text, "\n```"));
            }
        }
        Block::List { ordered, items } => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    parts.push(Part::Markup("\n".into()));
                }
                let marker = if *ordered {
                    format!("{}. ", i + 1)
                } else {
                    "- ".to_owned()
                };
                parts.push(Part::Markup(marker));
                inline::parts(parts, &item.0, "");
            }
        }
        // Rendered by `pieces`.
        Block::Divider | Block::Table { .. } | Block::Actions(_) => {}
    }
    md
}

/// A fence's language name, when it is a plain word (it is written raw, after the backticks).
fn fence_language(language: &str) -> &str {
    let plain = language.len() <= 20
        && language
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.' | '#'));
    if plain { language } else { "" }
}
