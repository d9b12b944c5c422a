//! Feishu card markdown: escaping card text, and cutting an element to a size.
//!
//! Invariants: text from the card reaches a `markdown` element only through [`Writer`]. Outside
//! code, every character that could start markup becomes a numeric character reference (`<` is
//! `&#60;`, `*` is `&#42;`, …), and so do list, heading-underline and ordered-list markers at the
//! start of a line; so nothing a model writes becomes a mention (`<at …>`), a tag (`<font>`,
//! `<link>`), a link or image, emphasis, a heading, a list, a quote or a table. Code is shown as
//! written (markdown does not read markup inside code), except that a `<` that could open a tag
//! gets a zero-width space after it and a third backtick in a row gets one before it, so code can
//! neither open a tag nor end its fence; the price is an invisible character when such code is
//! copied. A cut falls between two characters of the text, never inside a reference, closes every
//! marker it opened, and ends with a note saying how many characters were left out.

use serde_json::{Map, Value};

use super::text::{clean, json_char_len, json_len, plural};

/// One piece of a markdown element's content.
#[derive(Debug)]
pub(crate) enum Part {
    /// Markup written by the renderer (line breaks, list and quote markers): whole or not at all.
    Markup(String),
    /// Text from the card, between `open` and `close` markup that are written whole around any
    /// part of it that is shown.
    Text {
        open: String,
        text: String,
        close: String,
        /// Code: shown as written instead of escaped.
        code: bool,
    },
}

impl Part {
    /// Text to escape, without markers.
    pub(crate) fn plain(text: &str) -> Self {
        Self::styled("", text, "")
    }

    /// Text to escape, between markers.
    pub(crate) fn styled(open: &str, text: &str, close: &str) -> Self {
        Self::Text {
            open: open.to_owned(),
            text: clean(text),
            close: close.to_owned(),
            code: false,
        }
    }

    /// Code between markers.
    pub(crate) fn code(open: &str, text: &str, close: &str) -> Self {
        Self::Text {
            open: open.to_owned(),
            text: clean(text),
            close: close.to_owned(),
            code: true,
        }
    }
}

/// One `markdown` element: `open`, the parts, `close`, shown at `text_size`.
#[derive(Debug, Default)]
pub(crate) struct Markdown {
    pub(crate) text_size: Option<&'static str>,
    /// Markup around the whole content (a colour), written even when the content is cut.
    pub(crate) open: &'static str,
    pub(crate) close: &'static str,
    pub(crate) parts: Vec<Part>,
}

impl Markdown {
    /// Whether there is no visible text to show.
    pub(crate) fn is_empty(&self) -> bool {
        !self
            .parts
            .iter()
            .any(|p| matches!(p, Part::Text { text, .. } if !text.trim().is_empty()))
    }

    /// The element, whole.
    pub(crate) fn element(&self) -> Value {
        self.with_content(self.content(None))
    }

    /// The element cut so that its JSON takes at most `max_bytes` where it can (the shortest cut
    /// is the markers and the note), for when the whole element does not fit.
    pub(crate) fn cut(&self, max_bytes: usize) -> Value {
        let empty = super::text::json_size(&self.with_content(String::new()));
        self.with_content(self.content(Some(max_bytes.saturating_sub(empty))))
    }

    fn with_content(&self, content: String) -> Value {
        let mut element = Map::new();
        element.insert("tag".into(), "markdown".into());
        element.insert("content".into(), content.into());
        if let Some(size) = self.text_size {
            element.insert("text_size".into(), size.into());
        }
        Value::Object(element)
    }

    /// The content, whole or cut to `room` bytes of JSON.
    fn content(&self, room: Option<usize>) -> String {
        let total: usize = self.parts.iter().map(Part::chars).sum();
        let budget = room.map(|room| {
            room.saturating_sub(json_len(self.open) + json_len(self.close) + json_len(&note(total)))
        });
        let mut w = Writer::default();
        w.out.push_str(self.open);
        let shown = match budget {
            None => {
                self.parts.iter().for_each(|part| w.part(part));
                total
            }
            Some(budget) => w.parts_within(&self.parts, budget),
        };
        if shown < total {
            w.out.push_str(&note(total - shown));
        }
        w.out.push_str(self.close);
        w.out
    }
}

impl Part {
    fn chars(&self) -> usize {
        match self {
            Self::Markup(_) => 0,
            Self::Text { text, .. } => text.chars().count(),
        }
    }
}

/// What a cut element ends with.
fn note(left_out: usize) -> String {
    format!("\n\n… {} not shown", plural(left_out, "more character"))
}

/// Where the next character falls in its line, as far as block markup cares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Line {
    /// At the start (after indentation or a block marker).
    #[default]
    Start,
    /// After digits at the start, where `.` or `)` would make an ordered list.
    Digits,
    /// Anywhere else.
    Inside,
}

/// One character of text as written to markdown.
#[derive(Clone, Copy, Debug)]
enum Out {
    Char(char),
    /// A numeric character reference: `&#60;`.
    Reference(char),
    /// A zero-width space, then the character.
    Broken(char),
}

impl Out {
    fn json_len(self) -> usize {
        match self {
            Self::Char(c) => json_char_len(c),
            // `&#` + decimal digits + `;`
            Self::Reference(c) => 3 + (c as u32).to_string().len(),
            Self::Broken(c) => '\u{200b}'.len_utf8() + json_char_len(c),
        }
    }
}

/// Characters that start markup anywhere in a line.
const MARKUP: &[char] = &['&', '<', '>', '*', '_', '~', '`', '[', ']', '|', '#', '\\'];

/// Writes parts to markdown, escaping text and keeping the state escaping depends on.
#[derive(Debug, Default)]
struct Writer {
    out: String,
    line: Line,
    /// The previous character of the current code run (`\0` at its start).
    prev: char,
    /// Backticks in a row just written in the current code run.
    backticks: usize,
}

impl Writer {
    fn markup(&mut self, markup: &str) {
        if markup.is_empty() {
            return;
        }
        self.out.push_str(markup);
        self.line = if markup.ends_with(['\n', ' ']) {
            Line::Start
        } else {
            Line::Inside
        };
        self.prev = '\0';
        self.backticks = 0;
    }

    fn part(&mut self, part: &Part) {
        match part {
            Part::Markup(markup) => self.markup(markup),
            Part::Text {
                open,
                text,
                close,
                code,
            } => {
                self.markup(open);
                for c in text.chars() {
                    let out = self.escape(c, *code);
                    self.push(c, out);
                }
                self.markup(close);
            }
        }
    }

    /// Writes as many parts as fit in `budget` bytes of JSON; returns how many characters of
    /// text were shown.
    fn parts_within(&mut self, parts: &[Part], budget: usize) -> usize {
        let (mut used, mut shown) = (0, 0);
        for part in parts {
            let (open, text, close, code) = match part {
                Part::Markup(markup) => {
                    used += json_len(markup);
                    if used > budget {
                        break;
                    }
                    self.markup(markup);
                    continue;
                }
                Part::Text {
                    open,
                    text,
                    close,
                    code,
                } => (open, text, close, *code),
            };
            let markers = json_len(open) + json_len(close);
            let before = (self.out.len(), self.line);
            self.markup(open);
            let mut cut = false;
            let mut written = 0;
            for c in text.chars() {
                let out = self.escape(c, code);
                if used + markers + out.json_len() > budget {
                    cut = true;
                    break;
                }
                used += out.json_len();
                self.push(c, out);
                written += 1;
            }
            if written == 0 && !text.is_empty() {
                // Not even one character fits: no empty markers either.
                self.out.truncate(before.0);
                self.line = before.1;
                break;
            }
            used += markers;
            shown += written;
            self.markup(close);
            if cut {
                break;
            }
        }
        shown
    }

    fn escape(&self, c: char, code: bool) -> Out {
        if code {
            let opens_tag = c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?');
            return if (self.prev == '<' && opens_tag) || (c == '`' && self.backticks == 2) {
                Out::Broken(c)
            } else {
                Out::Char(c)
            };
        }
        match (c, self.line) {
            (c, _) if MARKUP.contains(&c) => Out::Reference(c),
            ('-' | '+' | '=', Line::Start) | ('.' | ')', Line::Digits) => Out::Reference(c),
            _ => Out::Char(c),
        }
    }

    fn push(&mut self, c: char, out: Out) {
        match out {
            Out::Char(c) => self.out.push(c),
            Out::Reference(c) => {
                self.out.push_str("&#");
                self.out.push_str(&(c as u32).to_string());
                self.out.push(';');
            }
            Out::Broken(c) => {
                self.out.push('\u{200b}');
                self.out.push(c);
            }
        }
        self.line = match (c, self.line) {
            ('\n', _) => Line::Start,
            (' ' | '\t', Line::Start) => Line::Start,
            ('0'..='9', Line::Start | Line::Digits) => Line::Digits,
            _ => Line::Inside,
        };
        self.backticks = match out {
            Out::Broken('`') => 1,
            _ if c == '`' => self.backticks + 1,
            _ => 0,
        };
        self.prev = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::text::json_size;

    fn md(parts: Vec<Part>) -> Markdown {
        Markdown {
            parts,
            ..Markdown::default()
        }
    }

    fn content(element: &Value) -> &str {
        element["content"].as_str().unwrap()
    }

    /// Every `&#` starts a whole reference.
    fn references_whole(text: &str) -> bool {
        text.split("&#").skip(1).all(|rest| {
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && rest[digits..].starts_with(';')
        })
    }

    #[test]
    fn text_cannot_become_markup() {
        let text = "<at id=all></at> [x](https://e.com) **b** a_b ~~s~~ `c` | # \\ &lt;";
        assert_eq!(
            content(&md(vec![Part::plain(text)]).element()),
            "&#60;at id=all&#62;&#60;/at&#62; &#91;x&#93;(https://e.com) &#42;&#42;b&#42;&#42; \
             a&#95;b &#126;&#126;s&#126;&#126; &#96;c&#96; &#124; &#35; &#92; &#38;lt;"
        );
        let lines = "- a\n  + b\n12. c\n3) d\n===\nx - 1. y";
        assert_eq!(
            content(&md(vec![Part::plain(lines)]).element()),
            "&#45; a\n  &#43; b\n12&#46; c\n3&#41; d\n&#61;==\nx - 1. y"
        );
    }

    #[test]
    fn code_is_kept_but_cannot_open_tags_or_close_its_fence() {
        let code = Part::code("```\n", "a<b && c < d <at id=all>\n````x", "\n```");
        assert_eq!(
            content(&md(vec![code]).element()),
            "```\na<\u{200b}b && c < d <\u{200b}at id=all>\n``\u{200b}``x\n```"
        );
    }

    #[test]
    fn a_cut_closes_its_markers_and_says_what_was_left_out() {
        let markdown = Markdown {
            text_size: Some("notation"),
            open: "<font color='grey'>",
            close: "</font>",
            parts: vec![Part::plain("héllo "), Part::styled("**", "wörld<", "**")],
        };
        let whole = markdown.element();
        assert_eq!(
            content(&whole),
            "<font color='grey'>héllo **wörld&#60;**</font>"
        );
        let size = json_size(&whole);
        for max in 0..size {
            let cut = markdown.cut(max);
            let text = content(&cut);
            assert!(text.starts_with("<font color='grey'>") && text.ends_with("</font>"));
            assert!(text.contains("more character"), "{text}");
            assert_eq!(text.matches("**").count() % 2, 0, "{text}");
            assert!(references_whole(text), "{text}");
            if max >= json_size(&markdown.cut(0)) {
                assert!(json_size(&cut) <= max, "{max}: {text}");
            }
        }
        // Room for all but the last character and the longest note: only the `<` is left out.
        let cut = markdown.cut(size - "&#60;".len() + json_len(&note(12)));
        assert_eq!(
            content(&cut),
            "<font color='grey'>héllo **wörld**\n\n… 1 more character not shown</font>"
        );
    }
}
