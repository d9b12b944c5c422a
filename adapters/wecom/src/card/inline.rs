//! Inline text of the IR as WeCom markdown lines: escaping, styles, code and links.
//!
//! Invariants: text from the card reaches the markdown only through [`escape`] or as inline code
//! that cannot hold markup. Outside code, every character that could start markup is escaped with
//! a backslash (`\*`, `\_`, `` \` ``, `\[`, `\]`, `\~`, `\|`, `\\`), `<` is written `&lt;` (so no
//! tag, `<font …>` colour or `<@userid>` mention can form), and the first character of a line is
//! escaped when it could start a block (`#`, `>`, `-`, `+`, `=`, `:`, or a number followed by
//! `.` or `)`). Leading spaces become no-break spaces, so nothing is read as indented code and
//! nested list lines keep their indentation. Inline code is used only for text with no backtick,
//! no line break and no `<` that could open a tag; other code is escaped text. Styles never span
//! a line break: each line is styled on its own, so every line of the output is self-contained,
//! which is what lets a long answer be split into stream messages at any line break.

use workmate_cards::Inline;
use workmate_cards::md::{clean, one_line};

/// One line of text (no line break) as markdown text. `line_start`: the text begins a line, so a
/// character that would start a block there is escaped and leading spaces are kept visible.
pub(crate) fn escape(text: &str, line_start: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    if line_start {
        let trimmed = rest.trim_start_matches(' ');
        for _ in 0..rest.len() - trimmed.len() {
            out.push('\u{a0}');
        }
        rest = trimmed;
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with(['.', ')']) {
            out.push_str(&rest[..digits]);
            out.push('\\');
            rest = &rest[digits..];
        } else if rest.starts_with(['#', '>', '-', '+', '=', ':']) {
            out.push('\\');
        }
    }
    for c in rest.chars() {
        match c {
            '\\' | '*' | '_' | '`' | '[' | ']' | '~' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `<` at `i` in `text` could open a tag or a mention (`<font`, `</x`, `<!`, `<?`, `<@`).
fn opens_tag(text: &str, i: usize) -> bool {
    text[i + 1..]
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?' | '@'))
}

/// Whether `text` can be shown as inline code: one line, no backtick, no tag-like `<`.
pub(crate) fn code_safe(text: &str) -> bool {
    !text.contains(['`', '\n']) && !text.match_indices('<').any(|(i, _)| opens_tag(text, i))
}

/// `text` (one line) as inline code, with leading spaces as no-break spaces so the indentation
/// shows; `None` when it cannot be inline code (see [`code_safe`]) or is blank.
pub(crate) fn code_span(text: &str) -> Option<String> {
    if text.trim().is_empty() || !code_safe(text) {
        return None;
    }
    let trimmed = text.trim_start_matches(' ');
    let indent = "\u{a0}".repeat(text.len() - trimmed.len());
    Some(format!("`{indent}{trimmed}`"))
}

/// Rich text as markdown lines, split at its line breaks; every line is self-contained.
pub(crate) fn lines(inlines: &[Inline]) -> Vec<String> {
    let mut lines = Lines::default();
    for inline in inlines {
        match inline {
            // WeCom markdown has no strike-through: the text stays, unstyled.
            Inline::Text(text) | Inline::Strike(text) => lines.plain(&clean(text)),
            Inline::Bold(text) => lines.styled("**", &clean(text)),
            Inline::Italic(text) => lines.styled("*", &clean(text)),
            Inline::Code(text) => lines.code(&clean(text)),
            Inline::Link { text, url } => lines.link(text, url),
        }
    }
    lines
        .done
        .into_iter()
        .chain(std::iter::once(lines.current))
        .collect()
}

/// The lines written so far and the one being written.
#[derive(Debug, Default)]
struct Lines {
    done: Vec<String>,
    current: String,
}

impl Lines {
    fn at_start(&self) -> bool {
        self.current.is_empty()
    }

    fn break_line(&mut self) {
        self.done.push(std::mem::take(&mut self.current));
    }

    /// Calls `write` with each line of `text`, breaking the line between them.
    fn each_line(&mut self, text: &str, mut write: impl FnMut(&mut Self, &str)) {
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.break_line();
            }
            if !line.is_empty() {
                write(self, line);
            }
        }
    }

    fn plain(&mut self, text: &str) {
        self.each_line(text, |lines, line| {
            let escaped = escape(line, lines.at_start());
            lines.current.push_str(&escaped);
        });
    }

    /// Each line between markers; whitespace around it stays outside them, because `** x**` is
    /// not bold.
    fn styled(&mut self, marker: &str, text: &str) {
        self.each_line(text, |lines, line| {
            let core = line.trim();
            if core.is_empty() {
                lines.plain(line);
                return;
            }
            let start = line.len() - line.trim_start().len();
            let end = start + core.len();
            lines.plain(&line[..start]);
            let escaped = escape(core, false);
            lines
                .current
                .push_str(&format!("{marker}{escaped}{marker}"));
            lines.plain(&line[end..]);
        });
    }

    fn code(&mut self, text: &str) {
        match code_span(text) {
            Some(span) => self.current.push_str(&span),
            None => self.plain(text),
        }
    }

    /// `[text](url)` for web targets; anything else is shown as text with its target.
    fn link(&mut self, text: &str, url: &str) {
        let url = one_line(url);
        let text = match one_line(text) {
            text if text.is_empty() => url.clone(),
            text => text,
        };
        let lower = url.to_ascii_lowercase();
        if !["http://", "https://"].iter().any(|s| lower.starts_with(s)) {
            self.plain(&text);
            if !url.is_empty() && url != text {
                self.plain(&format!(" ({url})"));
            }
            return;
        }
        let label = escape(&text, false);
        self.current
            .push_str(&format!("[{label}]({})", destination(&url)));
    }
}

/// A link destination that ends where markdown expects: characters that would end it early, open
/// a tag or look like a mention are percent-encoded.
fn destination(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '(' | ')' | '<' | '>' | '"' | '\\' | '`' | ' ' | '[' | ']' | '|' | '@' => {
                out.push_str(&format!("%{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_block_starts() {
        assert_eq!(
            escape("a*b_c`d[e]f~g|h\\i", false),
            "a\\*b\\_c\\`d\\[e\\]f\\~g\\|h\\\\i"
        );
        assert_eq!(
            escape("<font color=\"info\">x</font>", false),
            "&lt;font color=\"info\">x&lt;/font>"
        );
        assert_eq!(escape("# title", true), "\\# title");
        assert_eq!(escape("# title", false), "# title");
        assert_eq!(escape("12. item", true), "12\\. item");
        assert_eq!(escape("3) item", true), "3\\) item");
        assert_eq!(escape("2026 was", true), "2026 was");
        assert_eq!(escape("  - nested", true), "\u{a0}\u{a0}\\- nested");
        assert_eq!(clean("a\tb\r\n\u{0}c"), "a    b\nc");
    }

    #[test]
    fn styles_code_and_links_per_line() {
        let out = lines(&[
            Inline::Bold(" a*b ".into()),
            Inline::Italic("x\ny".into()),
            Inline::Strike("gone".into()),
            Inline::Code("run_shell".into()),
            Inline::Code("a`b".into()),
            Inline::Code("Vec<String>".into()),
            Inline::Code("a < b".into()),
            Inline::Link {
                text: "the run".into(),
                url: "https://e.com/a_(b)?q=@all".into(),
            },
            Inline::Link {
                text: "all".into(),
                url: "javascript:alert(1)".into(),
            },
        ]);
        assert_eq!(
            out,
            [
                "\u{a0}**a\\*b** *x*",
                "*y*gone`run_shell`a\\`bVec&lt;String>`a < b`\
                 [the run](https://e.com/a_%28b%29?q=%40all)all (javascript:alert(1))",
            ]
        );
    }
}
