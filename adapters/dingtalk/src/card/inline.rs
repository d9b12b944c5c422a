//! Inline text of the IR as DingTalk markdown: escaping, styles, code and links.
//!
//! Invariants: text from a card reaches the markdown only through [`escape`] or as inline code
//! that cannot hold markup. Outside code every character that could start markup is escaped with
//! a backslash, `<` is written `&lt;` (so no HTML tag forms) and a character that would start a
//! block at the beginning of a line (`#`, `>`, `-`, `+`, `=`, `|`, or a number followed by `.` or
//! `)`) is escaped there. Leading spaces become no-break spaces, so nothing reads as indented code.
//! A style never spans a line break: each line is styled on its own. A link keeps its target only
//! when it is a plain `http(s)` URL; otherwise its text and target show as text.

use workmate_cards::Inline;
use workmate_cards::md::{clean, one_line};

/// One line of text (no line break) as markdown text. `line_start`: the text begins a line.
pub(crate) fn escape(text: &str, line_start: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    if line_start {
        let trimmed = rest.trim_start_matches(' ');
        out.extend(std::iter::repeat_n('\u{a0}', rest.len() - trimmed.len()));
        rest = trimmed;
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with(['.', ')']) {
            out.push_str(&rest[..digits]);
            out.push('\\');
            rest = &rest[digits..];
        } else if rest.starts_with(['#', '>', '-', '+', '=']) {
            out.push('\\');
        }
    }
    for c in rest.chars() {
        match c {
            '\\' | '*' | '_' | '`' | '[' | ']' | '~' | '|' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` (one line) as inline code; `None` when blank or it holds a backtick or `<`.
pub(crate) fn code_span(text: &str) -> Option<String> {
    if text.trim().is_empty() || text.contains(['`', '\n', '<']) {
        return None;
    }
    let trimmed = text.trim_start_matches(' ');
    let indent = "\u{a0}".repeat(text.len() - trimmed.len());
    Some(format!("`{indent}{trimmed}`"))
}

/// Rich text as markdown lines, split at its line breaks; every line is self-contained.
pub(crate) fn lines(inlines: &[Inline]) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    for inline in inlines {
        let (marker, text) = match inline {
            Inline::Text(t) => ("", clean(t)),
            Inline::Bold(t) => ("**", clean(t)),
            Inline::Italic(t) => ("*", clean(t)),
            Inline::Strike(t) => ("~~", clean(t)),
            Inline::Code(t) => ("`", clean(t)),
            Inline::Link { text, url } => {
                let text = one_line(text);
                let current = lines.last_mut();
                if let Some(current) = current {
                    let piece = link(&text, url, current.is_empty());
                    current.push_str(&piece);
                }
                continue;
            }
        };
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                lines.push(String::new());
            }
            if let Some(current) = lines.last_mut() {
                let piece = styled(marker, line, current.is_empty());
                current.push_str(&piece);
            }
        }
    }
    lines
}

/// One line between style markers (whitespace kept outside them, since `** x**` is not bold).
fn styled(marker: &str, line: &str, at_start: bool) -> String {
    if line.is_empty() {
        return String::new();
    }
    if marker == "`" {
        return code_span(line).unwrap_or_else(|| escape(line, at_start));
    }
    let core = line.trim();
    if marker.is_empty() || core.is_empty() {
        return escape(line, at_start);
    }
    let lead = &line[..line.len() - line.trim_start().len()];
    let trail = &line[line.trim_end().len()..];
    let lead = escape(lead, at_start);
    format!("{lead}{marker}{}{marker}{trail}", escape(core, false))
}

fn link(text: &str, url: &str, at_start: bool) -> String {
    let safe = (url.starts_with("https://") || url.starts_with("http://"))
        && !url.contains(|c: char| c.is_whitespace() || c.is_control() || "()<>\"'`".contains(c));
    let shown = if text.is_empty() { url } else { text };
    if safe {
        format!("[{}]({url})", escape(shown, false))
    } else if text.is_empty() || text == url {
        escape(&one_line(url), at_start)
    } else {
        format!(
            "{} ({})",
            escape(text, at_start),
            escape(&one_line(url), false)
        )
    }
}
