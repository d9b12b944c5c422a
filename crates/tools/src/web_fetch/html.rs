//! HTML to readable text, good enough for a model to read a page.
//!
//! Invariant: total over any input (malformed markup included) and linear in its length; scripts,
//! styles and comments never reach the text.

const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "pre",
    "blockquote",
    "hr",
    "title",
    "dt",
    "dd",
];
const HIDDEN_TAGS: &[&str] = &["script", "style", "noscript", "template", "svg", "head"];

/// The visible text of an HTML document, one block per line.
pub(crate) fn to_text(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while i < html.len() {
        let rest = &html[i..];
        if rest.starts_with("<!--") {
            i += lower[i..].find("-->").map_or(rest.len(), |end| end + 3);
            continue;
        }
        if rest.starts_with('<') {
            let end = rest.find('>').map_or(rest.len(), |e| e + 1);
            let name = tag_name(&lower[i + 1..i + end]);
            if HIDDEN_TAGS.contains(&name.as_str()) && !lower[i + 1..].starts_with('/') {
                // `head` keeps its title; other hidden elements vanish whole.
                let close = format!("</{name}");
                let skip = lower[i..].find(&close).unwrap_or(rest.len());
                if name == "head"
                    && let Some(t) = lower[i..i + skip].find("<title")
                {
                    let from = i + t;
                    let to = lower[from..i + skip]
                        .find("</title")
                        .map_or(i + skip, |e| from + e);
                    out.push_str(&decode(html[from..to].split_once('>').map_or("", |x| x.1)));
                    out.push('\n');
                }
                i += skip;
                continue;
            }
            if BLOCK_TAGS.contains(&name.as_str()) {
                out.push('\n');
            } else if matches!(name.as_str(), "td" | "th") {
                out.push('\t');
            }
            i += end;
            continue;
        }
        if rest.starts_with('&') {
            let (text, used) = entity(rest);
            out.push_str(&text);
            i += used;
            continue;
        }
        let next = rest.find(['<', '&']).unwrap_or(rest.len());
        out.push_str(&rest[..next]);
        i += next;
    }
    tidy(&out)
}

fn tag_name(inside: &str) -> String {
    inside
        .trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect()
}

/// Decodes the entities of plain text.
fn decode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(at) = text[i..].find('&') {
        out.push_str(&text[i..i + at]);
        let (decoded, used) = entity(&text[i + at..]);
        out.push_str(&decoded);
        i += at + used;
    }
    out.push_str(&text[i..]);
    out
}

/// Decodes one entity at the start of `text`; returns the text and the bytes consumed.
fn entity(text: &str) -> (String, usize) {
    let Some(end) = text[1..].find(';').filter(|e| *e <= 10).map(|e| e + 1) else {
        return ("&".to_owned(), 1);
    };
    let name = &text[1..end];
    let decoded = match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" | "#39" => Some('\''),
        "nbsp" => Some(' '),
        _ => name.strip_prefix('#').and_then(|n| {
            let code = match n.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => n.parse().ok(),
            };
            code.and_then(char::from_u32)
        }),
    };
    match decoded {
        Some(c) => (c.to_string(), end + 1),
        None => ("&".to_owned(), 1),
    }
}

/// Collapses runs of spaces and drops blank lines.
fn tidy(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_visible_text() {
        let html = "<html><head><title>T &amp; A</title><style>p{}</style></head><body>\
                    <script>alert(1)</script><h1>Hello</h1><p>a&lt;b &#x41;&#66; <b>bold</b></p>\
                    <!-- hidden --><ul><li>one</li><li>two</li></ul></body></html>";
        assert_eq!(to_text(html), "T & A\nHello\na<b AB bold\none\ntwo");
    }

    #[test]
    fn malformed_markup_does_not_panic() {
        for html in [
            "<",
            "<<>>",
            "&",
            "&#xZZ;",
            "<script>",
            "<!--",
            "é<p é>&é;",
            "<head><title>",
        ] {
            let _ = to_text(html);
        }
    }
}
