//! Markdown (as models write it) to card blocks, with pulldown-cmark.
//!
//! Invariants: conversion never panics and never recurses (nesting depth is bounded only by the
//! input), every piece of visible text of the source ends up in some block (markup, link targets
//! and reference definitions aside), and no `Heading`, `Text`, `Quote` or `Code` block is empty.
//!
//! The top-level container decides the block: a list at the top is a `List` whose nested lists,
//! quotes and code become indented lines of their item; a quote at the top is a `Quote` holding
//! everything inside it. HTML and anything without a block of its own is kept as plain text.

use std::mem;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::ir::{Block, Inline, RichText};

/// The deepest indentation of a nested list line, in steps.
const MAX_INDENT: usize = 8;

/// Converts markdown to card blocks.
pub fn markdown_to_blocks(md: &str) -> Vec<Block> {
    let mut conv = Converter::default();
    for event in Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        conv.event(event);
    }
    conv.finish()
}

/// A container that turns everything inside it into lines of one rich text.
#[derive(Debug)]
enum Container {
    Quote,
    List { ordered: bool, next: u64 },
    Item,
}

#[derive(Debug, Default)]
struct TableState {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    /// The inlines collected before the table, restored after it (a table inside a list item).
    saved: Vec<Inline>,
}

#[derive(Debug)]
struct LinkState {
    url: String,
    text: String,
}

#[derive(Debug, Default)]
struct Converter {
    blocks: Vec<Block>,
    /// The inlines of the current leaf, or of the whole top-level container.
    buf: Vec<Inline>,
    /// Nothing but indentation since the last line break in `buf`.
    line_start: bool,
    stack: Vec<Container>,
    /// The finished items of the top-level list.
    items: Vec<RichText>,
    bold: u32,
    italic: u32,
    strike: u32,
    heading: bool,
    /// Links and images being read (an image inside a link adds its alt text to the link).
    links: Vec<LinkState>,
    code: Option<(Option<String>, String)>,
    table: Option<TableState>,
}

impl Converter {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) | Event::InlineMath(code) | Event::DisplayMath(code) => {
                match self.links.last_mut() {
                    Some(link) => link.text.push_str(&code),
                    None => self.push(Inline::Code(code.into_string())),
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]")),
            Event::SoftBreak | Event::HardBreak => self.text("\n"),
            Event::Rule => {
                if self.stack.is_empty() {
                    self.flush_stray();
                    self.blocks.push(Block::Divider);
                } else {
                    self.break_line();
                    self.push(Inline::Text("———".into()));
                }
            }
            Event::TaskListMarker(done) => self.text(if done { "☑ " } else { "☐ " }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.break_line(),
            Tag::Heading { .. } => {
                self.flush_stray();
                self.break_line();
                self.heading = true;
            }
            Tag::BlockQuote(_) => {
                self.flush_stray();
                self.break_line();
                self.stack.push(Container::Quote);
            }
            Tag::List(first) => {
                self.flush_stray();
                self.stack.push(Container::List {
                    ordered: first.is_some(),
                    next: first.unwrap_or(1),
                });
            }
            Tag::Item => self.start_item(),
            Tag::CodeBlock(kind) => {
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .map(str::to_owned)
                        .filter(|l| !l.is_empty()),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some((language, String::new()));
            }
            Tag::Table(_) => {
                self.table = Some(TableState {
                    saved: mem::take(&mut self.buf),
                    ..TableState::default()
                });
            }
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push(LinkState {
                    url: dest_url.into_string(),
                    text: String::new(),
                });
            }
            // Footnotes, definition lists, super/subscript, metadata: their text flows as is.
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.flush_stray(),
            TagEnd::Heading(_) => {
                self.heading = false;
                if self.stack.is_empty() {
                    let text = RichText(mem::take(&mut self.buf)).plain();
                    let text = text.trim();
                    if !text.is_empty() {
                        self.blocks.push(Block::Heading {
                            text: text.to_owned(),
                        });
                    }
                }
            }
            TagEnd::BlockQuote(_) => {
                self.stack.pop();
                if self.stack.is_empty() {
                    self.emit_rich(Block::Quote);
                }
            }
            TagEnd::List(_) => {
                let popped = self.stack.pop();
                if self.stack.is_empty() {
                    let ordered = matches!(popped, Some(Container::List { ordered: true, .. }));
                    let items = mem::take(&mut self.items);
                    if !items.is_empty() {
                        self.blocks.push(Block::List { ordered, items });
                    }
                }
            }
            TagEnd::Item => {
                self.stack.pop();
                if matches!(self.stack.as_slice(), [Container::List { .. }]) {
                    let item = trim_rich(mem::take(&mut self.buf));
                    self.items.push(item);
                }
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header = mem::take(&mut table.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                let cell = RichText(mem::take(&mut self.buf)).plain().trim().to_owned();
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link | TagEnd::Image => {
                if let Some(LinkState { url, text }) = self.links.pop() {
                    let text = if text.is_empty() { url.clone() } else { text };
                    match self.links.last_mut() {
                        Some(outer) => outer.text.push_str(&text),
                        None => self.push(Inline::Link { text, url }),
                    }
                }
            }
            _ => {}
        }
    }

    fn start_item(&mut self) {
        // A top-level list's own items become separate items; deeper ones become marked lines.
        let top = matches!(self.stack.as_slice(), [Container::List { .. }]);
        let marker = match self.stack.last_mut() {
            Some(Container::List {
                ordered: true,
                next,
            }) => {
                let marker = format!("{next}. ");
                *next = next.saturating_add(1);
                marker
            }
            _ => "• ".to_owned(),
        };
        if !top {
            self.break_line();
            self.push(Inline::Text(marker));
            self.line_start = true;
        }
        self.stack.push(Container::Item);
    }

    /// The indentation of a new line: one step per list below the outermost one, capped so a
    /// pathologically deep input cannot make the output quadratic.
    fn indent(&self) -> String {
        let lists = self
            .stack
            .iter()
            .filter(|c| matches!(c, Container::List { .. }))
            .count();
        "   ".repeat(lists.saturating_sub(1).min(MAX_INDENT))
    }

    fn end_code(&mut self) {
        let Some((language, mut text)) = self.code.take() else {
            return;
        };
        if text.ends_with('\n') {
            text.pop();
        }
        if self.stack.is_empty() {
            self.flush_stray();
            if !text.trim().is_empty() {
                self.blocks.push(Block::Code { language, text });
            }
            return;
        }
        for line in text.lines() {
            self.break_line();
            self.push(Inline::Code(line.to_owned()));
        }
    }

    fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        self.buf = table.saved;
        if self.stack.is_empty() {
            self.flush_stray();
            self.blocks.push(Block::Table {
                header: table.header,
                rows: table.rows,
            });
            return;
        }
        for row in std::iter::once(&table.header).chain(&table.rows) {
            self.break_line();
            self.push(Inline::Text(row.join(" | ")));
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
        } else if let Some(link) = self.links.last_mut() {
            link.text.push_str(text);
        } else {
            let text = text.to_owned();
            let inline = if self.bold > 0 || self.heading {
                Inline::Bold(text)
            } else if self.italic > 0 {
                Inline::Italic(text)
            } else if self.strike > 0 {
                Inline::Strike(text)
            } else {
                Inline::Text(text)
            };
            self.push(inline);
        }
    }

    /// Appends an inline, merging it into the previous one when both have the same style.
    fn push(&mut self, inline: Inline) {
        if inline.text().is_empty() {
            return;
        }
        self.line_start = false;
        match (self.buf.last_mut(), inline) {
            (Some(Inline::Text(a)), Inline::Text(b))
            | (Some(Inline::Bold(a)), Inline::Bold(b))
            | (Some(Inline::Italic(a)), Inline::Italic(b))
            | (Some(Inline::Strike(a)), Inline::Strike(b)) => a.push_str(&b),
            (_, inline) => self.buf.push(inline),
        }
    }

    /// Starts a new line inside a container, indented to the current list depth.
    fn break_line(&mut self) {
        if self.stack.is_empty() || self.buf.is_empty() || self.line_start {
            return;
        }
        let indent = self.indent();
        self.push(Inline::Text(format!("\n{indent}")));
        self.line_start = true;
    }

    /// Emits inlines gathered outside any container as a paragraph.
    fn flush_stray(&mut self) {
        if self.stack.is_empty() && self.table.is_none() {
            self.emit_rich(Block::Text);
        }
    }

    fn emit_rich(&mut self, block: fn(RichText) -> Block) {
        let rich = trim_rich(mem::take(&mut self.buf));
        self.line_start = false;
        if !rich.is_empty() {
            self.blocks.push(block(rich));
        }
    }

    fn finish(mut self) -> Vec<Block> {
        // pulldown-cmark closes every container; this only guards against a future change.
        if !self.items.is_empty() {
            let items = mem::take(&mut self.items);
            self.blocks.push(Block::List {
                ordered: false,
                items,
            });
        }
        self.stack.clear();
        self.flush_stray();
        self.blocks
    }
}

/// Drops line breaks and blanks left at either end by block boundaries.
fn trim_rich(mut inlines: Vec<Inline>) -> RichText {
    if let Some(Inline::Text(t)) = inlines.last_mut() {
        let trimmed = t.trim_end().len();
        t.truncate(trimmed);
    }
    if let Some(Inline::Text(t)) = inlines.first_mut() {
        *t = t.trim_start().to_owned();
    }
    inlines.retain(|i| !i.text().is_empty());
    RichText(inlines)
}
