//! Plain text to and from the markup other systems store (HTML-like storage formats).

/// `text` with `&`, `<`, `>` and `"` escaped for HTML or XML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Plain text as HTML paragraphs: one `<p>` per blank-line-separated paragraph, lines within it
/// joined by `<br/>`.
pub(crate) fn paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let lines: Vec<String> = p.lines().map(|l| escape(l.trim_end())).collect();
            format!("<p>{}</p>", lines.join("<br/>"))
        })
        .collect()
}

/// The text of HTML-like markup: tags dropped (block ends become line breaks), the common
/// entities decoded, runs of blank lines squeezed.
pub(crate) fn text_of(markup: &str) -> String {
    let mut out = String::with_capacity(markup.len());
    let mut rest = markup;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            rest = "";
            break;
        };
        let tag = &rest[open + 1..open + close];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '/'])
            .next()
            .unwrap_or("");
        if matches!(
            name,
            "p" | "br" | "li" | "tr" | "h1" | "h2" | "h3" | "h4" | "div"
        ) && (tag.starts_with('/') || name == "br")
        {
            out.push('\n');
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    let decoded = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    let mut squeezed = String::with_capacity(decoded.len());
    for line in decoded.lines().map(str::trim_end) {
        if line.is_empty() && (squeezed.is_empty() || squeezed.ends_with("\n\n")) {
            continue;
        }
        squeezed.push_str(line);
        squeezed.push('\n');
    }
    squeezed.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_becomes_paragraphs_and_back() {
        let html = paragraphs("Q4 <draft> & notes\nline two\n\nSecond");
        assert_eq!(
            html,
            "<p>Q4 &lt;draft&gt; &amp; notes<br/>line two</p><p>Second</p>"
        );
        assert_eq!(text_of(&html), "Q4 <draft> & notes\nline two\nSecond");
        assert_eq!(
            text_of("<h1>T</h1><ul><li>a</li><li>b</li></ul>"),
            "T\na\nb"
        );
        assert_eq!(text_of("broken <tag"), "broken");
    }
}
