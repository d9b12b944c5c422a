//! Slack `mrkdwn`: escaping, inline styles, and cutting text to a length limit.
//!
//! Invariants: every piece of text from the card is escaped (`&`, `<`, `>`), so nothing a model
//! writes can become a mention, a `<!channel>` ping or a link; the only `<…>` this module emits
//! are links to `http(s)`/`mailto` targets. Cuts happen on `char` boundaries and never inside an
//! entity such as `&amp;`. Lengths are counted in `char`s of the escaped text, as sent.

use workmate_cards::text::one_line;
use workmate_cards::{Inline, RichText};

/// `&`, `<` and `>` as Slack wants them in any text it parses.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// A rich text as mrkdwn. Newlines inside inlines stay line breaks.
pub(crate) fn rich_text(text: &RichText) -> String {
    let mut out = String::new();
    for inline in &text.0 {
        push_inline(&mut out, inline);
    }
    out
}

/// Inlines as mrkdwn (a context line).
pub(crate) fn inlines(pieces: &[Inline]) -> String {
    let mut out = String::new();
    for inline in pieces {
        push_inline(&mut out, inline);
    }
    out
}

fn push_inline(out: &mut String, inline: &Inline) {
    match inline {
        Inline::Text(t) => out.push_str(&escape(t)),
        Inline::Bold(t) => wrap(out, "*", t),
        Inline::Italic(t) => wrap(out, "_", t),
        Inline::Strike(t) => wrap(out, "~", t),
        Inline::Code(t) => wrap(out, "`", t),
        Inline::Link { text, url } => link(out, text, url),
    }
}

/// Styles each line separately (Slack's markers do not span lines) and keeps surrounding
/// whitespace outside the markers (`* x*` is not bold in Slack). Runs of punctuation only are
/// left unstyled.
fn wrap(out: &mut String, marker: &str, text: &str) {
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let core = line.trim();
        // Styled punctuation looks the same, and Slack leaves markers around a lone `?` next to
        // other markup as literal asterisks.
        let visible = marker == "`" || core.chars().any(char::is_alphanumeric);
        if core.is_empty() || !visible {
            out.push_str(&escape(line));
            continue;
        }
        let start = line.len() - line.trim_start().len();
        let end = start + core.len();
        out.push_str(&escape(&line[..start]));
        out.push_str(marker);
        out.push_str(&escape(core));
        out.push_str(marker);
        out.push_str(&escape(&line[end..]));
    }
}

/// `<url|text>` for web and mail targets; anything else (`!channel`, `@U123`, `javascript:`)
/// is shown as text, because Slack would turn it into a ping, a mention or a dead link.
fn link(out: &mut String, text: &str, url: &str) {
    let text = one_line(text);
    let lower = url.to_ascii_lowercase();
    let linkable = ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme));
    if !linkable {
        out.push_str(&escape(&text));
        if !url.is_empty() && url != text {
            out.push_str(" (");
            out.push_str(&escape(url));
            out.push(')');
        }
        return;
    }
    let mut target = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '|' => target.push_str("%7C"),
            c if c.is_whitespace() => target.push_str("%20"),
            c => target.push(c),
        }
    }
    out.push('<');
    out.push_str(&escape(&target));
    if !text.is_empty() && text != url {
        out.push('|');
        out.push_str(&escape(&text));
    }
    out.push('>');
}

/// `text` cut to at most `max` chars, ending in `…` when cut; never inside an entity (which
/// [`workmate_cards::text::truncate`] knows nothing of, hence this one).
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out = cut(text, max.saturating_sub(1)).to_owned();
    out.push('…');
    out
}

/// The longest prefix of `text` of at most `max` chars that does not end inside an entity.
fn cut(text: &str, max: usize) -> &str {
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let head = &text[..end];
    // An `&` with no `;` after it is an entity cut in half (escaped text has no bare `&`).
    match head.rfind('&') {
        Some(amp) if !head[amp..].contains(';') && end < text.len() => &head[..amp],
        _ => head,
    }
}

/// Splits `text` into chunks of at most `max` chars at line boundaries, with `prefix` in front
/// of every line. A line too long for one chunk is cut (at a space when there is one nearby).
pub(crate) fn split_lines(text: &str, max: usize, prefix: &str) -> Vec<String> {
    let prefix_len = prefix.chars().count();
    // Room for at least some text on every line, whatever the caller asks for.
    let room = max.saturating_sub(prefix_len).max(16);
    let mut lines = Vec::new();
    for line in text.split('\n') {
        let mut rest = line;
        loop {
            if rest.chars().count() <= room {
                lines.push(rest);
                break;
            }
            let head = cut_at_space(rest, room);
            lines.push(head);
            rest = &rest[head.len()..];
        }
    }
    let mut chunks = Vec::new();
    let mut chunk = String::new();
    let mut chunk_len = 0;
    for line in lines {
        let len = prefix_len + line.chars().count();
        if !chunk.is_empty() && chunk_len + 1 + len > max {
            chunks.push(std::mem::take(&mut chunk));
            chunk_len = 0;
        }
        if !chunk.is_empty() {
            chunk.push('\n');
            chunk_len += 1;
        }
        chunk.push_str(prefix);
        chunk.push_str(line);
        chunk_len += len;
    }
    if !chunk.is_empty() || chunks.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// A non-empty prefix of `text` of at most `max` chars, ending after a space in its last
/// quarter when there is one, else cut hard (outside entities).
fn cut_at_space(text: &str, max: usize) -> &str {
    let head = cut(text, max);
    let head = if head.is_empty() {
        // Only possible when an entity straddles a tiny `max`; take it whole.
        text.find(';').map_or(text, |i| &text[..=i])
    } else {
        head
    };
    match head.rfind(' ') {
        Some(space) if space + 1 >= head.len() * 3 / 4 => &head[..=space],
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_and_links() {
        let text = RichText(vec![
            Inline::Bold(" a<b ".into()),
            Inline::Italic("x\ny".into()),
            Inline::Bold("?".into()),
            Inline::Link {
                text: "the run".into(),
                url: "https://e.com/?a=1&b=|".into(),
            },
            Inline::Link {
                text: "all".into(),
                url: "!channel".into(),
            },
        ]);
        assert_eq!(
            rich_text(&text),
            " *a&lt;b* _x_\n_y_?<https://e.com/?a=1&amp;b=%7C|the run>all (!channel)"
        );
    }

    #[test]
    fn cuts_never_split_entities() {
        assert_eq!(truncate("ab&amp;cd", 4), "ab…");
        assert_eq!(truncate("ab&amp;cd", 8), "ab&amp;…");
        assert_eq!(truncate("short", 5), "short");
        let chunks = split_lines(&"a&amp;".repeat(10), 20, "");
        assert!(chunks.iter().all(|c| c.chars().count() <= 20));
        assert_eq!(chunks.concat(), "a&amp;".repeat(10));
    }

    #[test]
    fn splits_at_lines_with_prefix() {
        let text = "one\ntwo\nthree";
        assert_eq!(split_lines(text, 11, "> "), ["> one\n> two", "> three"]);
        assert_eq!(split_lines("", 10, ""), [""]);
        let long = "word ".repeat(10);
        let chunks = split_lines(long.trim_end(), 20, "");
        assert!(chunks.iter().all(|c| c.chars().count() <= 20), "{chunks:?}");
        assert_eq!(chunks.concat().replace('\n', ""), long.trim_end());
    }
}
