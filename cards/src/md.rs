//! Helpers for platforms whose cards are markdown text (WeCom's stream content, DingTalk's AI
//! card): cleaning model text, and laying out lines as blocks. Each platform keeps its own
//! escaping, which differs with its markdown dialect, and passes it in.
//!
//! Invariant: these functions add no markup of their own besides the `prefix` a caller asks for,
//! the two-space hard break between lines of one block, and `**` around field labels; everything
//! from a card goes through the caller's `escape`.

/// `text` with control characters other than line breaks dropped, and tabs as four spaces.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` [`clean`]ed, with line breaks and runs of whitespace folded into single spaces.
pub fn one_line(text: &str) -> String {
    crate::text::one_line(&clean(text))
}

/// Lines as one block: blank lines at the ends dropped, runs of them folded into one, `prefix`
/// on every line, and a hard break at the end of every line followed by another.
pub fn paragraph(lines: &[String], prefix: &str) -> String {
    let blank = |line: &String| line.trim().is_empty();
    let mut kept: Vec<&String> = Vec::new();
    for line in lines {
        if blank(line) && kept.last().is_none_or(|last| blank(last)) {
            continue;
        }
        kept.push(line);
    }
    while kept.last().is_some_and(|last| blank(last)) {
        kept.pop();
    }
    let mut out = String::new();
    for (i, line) in kept.iter().enumerate() {
        if blank(line) {
            out.push_str(prefix.trim_end());
        } else {
            out.push_str(prefix);
            out.push_str(line.trim_end());
            if kept.get(i + 1).is_some_and(|next| !blank(next)) {
                out.push_str("  ");
            }
        }
        if i + 1 < kept.len() {
            out.push('\n');
        }
    }
    out
}

/// Label/value fields as lines `**label**: value`, each part on one line and escaped with
/// `escape(text, line_start)`; a field without a label is its value alone.
pub fn field_lines(fields: &[(String, String)], escape: fn(&str, bool) -> String) -> Vec<String> {
    fields
        .iter()
        .map(|(label, value)| {
            let (label, value) = (one_line(label), one_line(value));
            match (label.is_empty(), value.is_empty()) {
                (true, _) => escape(&value, true),
                (false, true) => format!("**{}**", escape(&label, false)),
                (false, false) => {
                    format!("**{}**: {}", escape(&label, false), escape(&value, false))
                }
            }
        })
        .collect()
}

/// A list from its items' lines: `- ` or `1. ` before each item, blank lines dropped, an item's
/// further lines after a hard break and `indent`; items without text left out (and not counted).
pub fn list(ordered: bool, items: impl IntoIterator<Item = Vec<String>>, indent: &str) -> String {
    let separator = format!("  \n{indent}");
    let mut out: Vec<String> = Vec::new();
    for lines in items {
        let lines: Vec<&str> = lines
            .iter()
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.trim_end())
            .collect();
        if lines.is_empty() {
            continue;
        }
        let marker = if ordered {
            format!("{}. ", out.len() + 1)
        } else {
            "- ".to_owned()
        };
        out.push(format!("{marker}{}", lines.join(&separator)));
    }
    out.join("\n")
}
