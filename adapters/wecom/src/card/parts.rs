//! A card's text sorted into what a template card has room for: a title, a line above it, label
//! and value rows, body lines, notes and buttons.
//!
//! Invariants: every piece of text of the card lands in exactly one part, in card order, as plain
//! text (no markup, control characters dropped); nothing is cut here.

use workmate_cards::text::list_marker;
use workmate_cards::{Block, Button, Card, Inline, RichText};

use workmate_cards::md::{clean, one_line};

/// The parts of one card.
#[derive(Debug, Default)]
pub(crate) struct Parts<'a> {
    /// The first heading, or the first paragraph that is all bold (or code): a prompt's question.
    pub(crate) title: Option<String>,
    /// A note that comes before anything else (a question's header, a turn's status line).
    pub(crate) header: Option<String>,
    /// Label and value pairs with something in them.
    pub(crate) fields: Vec<(String, String)>,
    /// Lines of paragraphs, quotes, code, tables and lists; later headings too.
    pub(crate) body: Vec<String>,
    /// The other notes (context lines), one line each.
    pub(crate) notes: Vec<String>,
    /// Every button, in order.
    pub(crate) buttons: Vec<&'a Button>,
}

impl<'a> Parts<'a> {
    pub(crate) fn of(card: &'a Card) -> Self {
        let mut parts = Self::default();
        for block in &card.blocks {
            parts.add(block);
        }
        parts
    }

    fn add(&mut self, block: &'a Block) {
        match block {
            Block::Heading { text } => self.title_or_body(one_line(text)),
            Block::Text(text) if self.title.is_none() && bold_line(text) => {
                self.title_or_body(one_line(&text.plain()));
            }
            Block::Text(text) | Block::Quote(text) => self.body_lines(&text.plain()),
            Block::Context(inlines) => {
                let note = one_line(&inlines.iter().map(Inline::text).collect::<String>());
                if note.is_empty() {
                    return;
                }
                let first = self.title.is_none()
                    && self.header.is_none()
                    && self.fields.is_empty()
                    && self.body.is_empty()
                    && self.notes.is_empty();
                if first {
                    self.header = Some(note);
                } else {
                    self.notes.push(note);
                }
            }
            Block::Fields(fields) => self.fields.extend(
                fields
                    .iter()
                    .map(|(label, value)| (one_line(label), one_line(value)))
                    .filter(|(label, value)| !label.is_empty() || !value.is_empty()),
            ),
            Block::Code { text, .. } => self.body_lines(text),
            Block::Table { header, rows } => {
                for row in std::iter::once(header).chain(rows) {
                    let cells: Vec<String> = row.iter().map(|cell| one_line(cell)).collect();
                    self.body_lines(&cells.join(" | "));
                }
            }
            Block::List { ordered, items } => {
                for (i, item) in items.iter().enumerate() {
                    let text = item.plain();
                    if !text.trim().is_empty() {
                        self.body_lines(&format!("{}{}", list_marker(*ordered, i), text));
                    }
                }
            }
            Block::Divider => {}
            Block::Actions(buttons) => self.buttons.extend(buttons),
        }
    }

    fn title_or_body(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        match self.title {
            None => self.title = Some(text),
            Some(_) => self.body.push(text),
        }
    }

    /// The non-blank lines of `text`, without trailing whitespace.
    fn body_lines(&mut self, text: &str) {
        self.body.extend(
            clean(text)
                .lines()
                .map(str::trim_end)
                .filter(|line| !line.trim().is_empty())
                .map(str::to_owned),
        );
    }
}

/// Whether the paragraph is a title line: all bold or code, with something to show.
fn bold_line(text: &RichText) -> bool {
    !text.is_empty()
        && text
            .0
            .iter()
            .all(|inline| matches!(inline, Inline::Bold(_) | Inline::Code(_)))
        && !text.plain().contains('\n')
}
