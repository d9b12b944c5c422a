//! Inline text of the IR as markdown parts: styles, code and links.
//!
//! Invariants: markers never span a line break (each line is styled on its own, with the
//! surrounding whitespace outside the markers, where markdown expects it); a link is only a link
//! to an `http(s)` target, with a destination that cannot end early; anything else is shown as
//! text. See `markdown` for how the text itself is escaped.

use workmate_cards::Inline;

use super::markdown::Part;
use super::text::{clean, one_line};

/// `inlines` as parts, with `prefix` (a quote marker) after every line break.
pub(crate) fn parts(out: &mut Vec<Part>, inlines: &[Inline], prefix: &str) {
    for inline in inlines {
        match inline {
            Inline::Text(text) => lines(out, text, prefix, Part::plain),
            Inline::Bold(text) => styled(out, "**", text, prefix),
            Inline::Italic(text) => styled(out, "*", text, prefix),
            Inline::Strike(text) => styled(out, "~~", text, prefix),
            Inline::Code(text) => code(out, text, prefix),
            Inline::Link { text, url } => link(out, text, url),
        }
    }
}

/// Calls `part` for each line of `text`, with a line break and `prefix` between lines.
fn lines(out: &mut Vec<Part>, text: &str, prefix: &str, part: impl Fn(&str) -> Part) {
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push(Part::Markup(format!("\n{prefix}")));
        }
        if !line.is_empty() {
            out.push(part(line));
        }
    }
}

/// Each line styled on its own; whitespace around it stays outside the markers, because
/// `** x**` is not bold.
fn styled(out: &mut Vec<Part>, marker: &str, text: &str, prefix: &str) {
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push(Part::Markup(format!("\n{prefix}")));
        }
        let core = line.trim();
        if core.is_empty() {
            if !line.is_empty() {
                out.push(Part::plain(line));
            }
            continue;
        }
        let start = line.len() - line.trim_start().len();
        let end = start + core.len();
        if start > 0 {
            out.push(Part::plain(&line[..start]));
        }
        out.push(Part::styled(marker, core, marker));
        if end < line.len() {
            out.push(Part::plain(&line[end..]));
        }
    }
}

/// Inline code between single backticks. Code with a backtick or a line break cannot be held by
/// one code span, so it is shown as escaped text instead.
fn code(out: &mut Vec<Part>, text: &str, prefix: &str) {
    let text = clean(text);
    if text.is_empty() {
        return;
    }
    if text.contains(['`', '\n']) {
        lines(out, &text, prefix, Part::plain);
    } else {
        out.push(Part::code("`", &text, "`"));
    }
}

/// `[text](url)` for web targets; anything else (a `javascript:` or `lark:` target, a relative
/// path) is shown as text with its target, since Feishu only links `http(s)`.
fn link(out: &mut Vec<Part>, text: &str, url: &str) {
    let url = one_line(url);
    let text = match one_line(text) {
        text if text.is_empty() => url.clone(),
        text => text,
    };
    let lower = url.to_ascii_lowercase();
    let web = ["http://", "https://"].iter().any(|s| lower.starts_with(s));
    if !web {
        out.push(Part::plain(&text));
        if !url.is_empty() && url != text {
            out.push(Part::plain(&format!(" ({url})")));
        }
        return;
    }
    if text.is_empty() {
        return;
    }
    out.push(Part::styled(
        "[",
        &text,
        &format!("]({})", destination(&url)),
    ));
}

/// A link destination that ends where markdown expects: characters that would end it, open a
/// tag or an entity are percent-encoded.
fn destination(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '(' | ')' | '<' | '>' | '"' | '\\' | '`' | ' ' | '[' | ']' | '|' => {
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
    use crate::card::markdown::Markdown;

    fn render(inlines: &[Inline]) -> String {
        let mut markdown = Markdown::default();
        parts(&mut markdown.parts, inlines, "> ");
        markdown.element()["content"].as_str().unwrap().to_owned()
    }

    #[test]
    fn styles_links_and_code() {
        let text = render(&[
            Inline::Bold(" a<b ".into()),
            Inline::Italic("x\ny".into()),
            Inline::Strike("gone".into()),
            Inline::Code("run_shell".into()),
            Inline::Code("a`b".into()),
            Inline::Link {
                text: "the run".into(),
                url: "https://e.com/a_(b)?q=\"x\"".into(),
            },
            Inline::Link {
                text: "all".into(),
                url: "javascript:alert(1)".into(),
            },
        ]);
        assert_eq!(
            text,
            " **a&#60;b** *x*\n> *y*~~gone~~`run_shell`a&#96;b\
             [the run](https://e.com/a_%28b%29?q=%22x%22)all (javascript:alert(1))"
        );
    }
}
