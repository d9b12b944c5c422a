//! Small text helpers shared by the fold and the renderers. All cuts are on `char` boundaries.

/// `text` with line breaks and runs of whitespace folded into single spaces.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters, ending in `…` when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The first `max` lines of `text`, and how many lines were left out.
pub(crate) fn head_lines(text: &str, max: usize) -> (String, usize) {
    let total = text.lines().count();
    let head = text.lines().take(max).collect::<Vec<_>>().join("\n");
    (head, total.saturating_sub(max))
}

/// The files an `apply_patch` patch adds, updates or deletes, in order.
pub(crate) fn patch_files(patch: &str) -> Vec<&str> {
    patch
        .lines()
        .filter_map(|line| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                .iter()
                .find_map(|prefix| line.strip_prefix(prefix))
        })
        .map(str::trim)
        .collect()
}

/// A count with its noun, singular or plural: `1 line`, `3 lines`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_respect_char_boundaries() {
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate("short", 5), "short");
        assert_eq!(one_line("a\n  b\tc "), "a b c");
        assert_eq!(head_lines("1\n2\n3", 2), ("1\n2".to_owned(), 1));
        assert_eq!(head_lines("1\n2", 5), ("1\n2".to_owned(), 0));
        assert_eq!(
            patch_files("*** Begin Patch\n*** Add File: a.txt\n+x\n*** Delete File: b\n"),
            ["a.txt", "b"]
        );
        assert_eq!(plural(1, "line"), "1 line");
        assert_eq!(plural(2, "line"), "2 lines");
    }
}
