//! A small glob matcher for `grep`'s file filter: `*` and `?` within one path segment, `**` across
//! segments, `[abc]`/`[a-z]`/`[!a]` classes and `{a,b}` alternatives.
//!
//! Invariant: matching is iterative over bounded input and never panics, whatever the pattern.

/// A compiled file filter.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    alternatives: Vec<Vec<char>>,
    /// Without a `/`, the pattern is matched against the file name alone (as ripgrep does).
    name_only: bool,
}

impl Glob {
    pub(crate) fn new(pattern: &str) -> Self {
        let alternatives = expand_braces(pattern)
            .into_iter()
            .map(|alt| alt.chars().collect())
            .collect();
        Self {
            alternatives,
            name_only: !pattern.contains('/'),
        }
    }

    /// Whether the file at `relative` (slash-separated, relative to the search folder) matches.
    pub(crate) fn matches(&self, relative: &str) -> bool {
        let subject = if self.name_only {
            relative.rsplit('/').next().unwrap_or(relative)
        } else {
            relative
        };
        let subject: Vec<char> = subject.chars().collect();
        self.alternatives.iter().any(|p| matches(p, &subject))
    }
}

/// Expands `{a,b}` groups (not nested) into alternatives, at most 64 of them.
fn expand_braces(pattern: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (pattern.find('{'), pattern.find('}')) else {
        return vec![pattern.to_owned()];
    };
    if close < open {
        return vec![pattern.to_owned()];
    }
    let (head, rest) = pattern.split_at(open);
    let inner = &rest[1..close - open];
    let tail = &rest[close - open + 1..];
    let mut out = Vec::new();
    for choice in inner.split(',') {
        for expanded in expand_braces(&format!("{head}{choice}{tail}")) {
            if out.len() < 64 {
                out.push(expanded);
            }
        }
    }
    out
}

/// Wildcard matching with backtracking on the last `*` and the last `**` seen (a `*` cannot cross
/// `/`, so when it is exhausted the enclosing `**` takes one more character instead).
fn matches(pattern: &[char], subject: &[char]) -> bool {
    let (mut p, mut s) = (0usize, 0usize);
    // (pattern index after the star, subject index it is being tried at).
    let mut single: Option<(usize, usize)> = None;
    let mut double: Option<(usize, usize)> = None;
    while s < subject.len() {
        match pattern.get(p) {
            Some('*') => {
                if pattern.get(p + 1) == Some(&'*') {
                    let mut next = p + 2;
                    // `**/` also matches zero folders.
                    if pattern.get(next) == Some(&'/') {
                        next += 1;
                    }
                    double = Some((next, s));
                    single = None;
                    p = next;
                } else {
                    single = Some((p + 1, s));
                    p += 1;
                }
                continue;
            }
            Some('?') if subject[s] != '/' => {
                p += 1;
                s += 1;
                continue;
            }
            Some('[') => match class(&pattern[p..], subject[s]) {
                Some((true, len)) => {
                    p += len;
                    s += 1;
                    continue;
                }
                None if subject[s] == '[' => {
                    p += 1;
                    s += 1;
                    continue;
                }
                Some((false, _)) | None => {}
            },
            Some(c) if *c == subject[s] && *c != '?' => {
                p += 1;
                s += 1;
                continue;
            }
            _ => {}
        }
        // Mismatch: let the last star swallow one more character, if it may.
        if let Some((next, tried)) = single
            && subject[tried] != '/'
        {
            single = Some((next, tried + 1));
            p = next;
            s = tried + 1;
        } else if let Some((next, tried)) = double {
            single = None;
            double = Some((next, tried + 1));
            p = next;
            s = tried + 1;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// Matches one character against a `[...]` class; returns (hit, length of the class in the
/// pattern), or `None` when the class is unterminated (then `[` is an ordinary character).
fn class(pattern: &[char], c: char) -> Option<(bool, usize)> {
    let negated = matches!(pattern.get(1), Some('!' | '^'));
    let mut i = if negated { 2 } else { 1 };
    let mut hit = false;
    let mut first = true;
    while let Some(&ch) = pattern.get(i) {
        if ch == ']' && !first {
            return Some((hit != negated && c != '/', i + 1));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-')
            && let Some(&end) = pattern.get(i + 2)
            && end != ']'
        {
            hit |= (ch..=end).contains(&c);
            i += 3;
        } else {
            hit |= ch == c;
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let cases = [
            ("*.rs", "src/main.rs", true),
            ("*.rs", "main.rs", true),
            ("*.rs", "main.rsx", false),
            ("*.{ts,tsx}", "a/b.tsx", true),
            ("*.{ts,tsx}", "a/b.js", false),
            ("src/*.rs", "src/a.rs", true),
            ("src/*.rs", "src/x/a.rs", false),
            ("src/**/*.rs", "src/x/y/a.rs", true),
            ("src/**/*.rs", "src/a.rs", true),
            ("**/test_?.py", "a/test_1.py", true),
            ("[ab]*.txt", "b1.txt", true),
            ("[!ab]*.txt", "b1.txt", false),
            ("[a-c].md", "c.md", true),
            ("[", "[", true),
            ("Cargo.toml", "crates/x/Cargo.toml", true),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(
                Glob::new(pattern).matches(path),
                expected,
                "{pattern} vs {path}"
            );
        }
    }

    #[test]
    fn odd_patterns_do_not_panic() {
        for pattern in [
            "", "*", "**", "{", "}{", "{a,", "[]", "[!]", "[a-]", "a**b", "***/",
        ] {
            let glob = Glob::new(pattern);
            let _ = glob.matches("a/b/c");
            let _ = glob.matches("");
        }
    }
}
