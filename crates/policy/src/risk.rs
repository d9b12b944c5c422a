//! Risk classes (spec §3.1): how much harm a tool call can do, which drives every permission
//! decision.
//!
//! Invariants: classification is a pure function of the tool name, its metadata and the tenant's
//! overrides; an override always wins, the most specific matching one first (ties go to the one
//! listed first); a malformed override pattern never matches; unknown tools are `Read` (the
//! metadata of a consequential tool must say so).

use serde::{Deserialize, Serialize};
use workmate_tools::ToolMetadata;

/// How much harm a tool call can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskClass {
    /// Reads only.
    Read,
    /// Writes files inside the session's folders.
    WriteLocal,
    /// Runs a shell command.
    Exec,
    /// Acts outside the machine: sends, posts, schedules.
    External,
}

impl RiskClass {
    /// Whether a call of this class needs more than a read-only mode allows.
    pub fn is_consequential(self) -> bool {
        self != Self::Read
    }

    /// `read`, `write_local`, `exec` or `external`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::WriteLocal => "write_local",
            Self::Exec => "exec",
            Self::External => "external",
        }
    }
}

/// A tenant's rule assigning a risk class to the tools whose names match a glob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskOverride {
    /// An fnmatch glob over tool names (`*`, `?`, `[abc]`, `[!abc]`), case-sensitive.
    pub pattern: String,
    /// The class the matching tools get.
    pub risk: RiskClass,
}

/// The risk class of `tool`: an override, else the built-in table, else its metadata.
pub fn classify(
    tool: &str,
    metadata: Option<&ToolMetadata>,
    overrides: &[RiskOverride],
) -> RiskClass {
    if let Some(risk) = override_for(tool, overrides) {
        return risk;
    }
    match tool {
        // Saving or deleting a memory changes what every later session is told.
        "write_file" | "replace_in_file" | "apply_patch" | "apply_unified_diff" | "remember"
        | "memory_update" | "memory_forget" => RiskClass::WriteLocal,
        "run_shell" => RiskClass::Exec,
        // A fetched URL can carry whatever the session read to any host.
        "web_fetch" => RiskClass::External,
        _ if metadata.is_some_and(|m| m.requires_approval) => RiskClass::External,
        _ => RiskClass::Read,
    }
}

/// The class of the most specific override matching `tool`; the first listed wins a tie.
fn override_for(tool: &str, overrides: &[RiskOverride]) -> Option<RiskClass> {
    let name: Vec<char> = tool.chars().collect();
    let mut best: Option<(usize, RiskClass)> = None;
    for rule in overrides {
        let Some(glob) = Glob::parse(&rule.pattern) else {
            continue;
        };
        if !glob.matches(&name) {
            continue;
        }
        let score = glob.specificity();
        if best.is_none_or(|(top, _)| score > top) {
            best = Some((score, rule.risk));
        }
    }
    best.map(|(_, risk)| risk)
}

/// One element of a compiled glob.
#[derive(Debug, PartialEq, Eq)]
enum Part {
    Literal(char),
    /// `?`: any one character.
    One,
    /// `*`: any run of characters, empty included.
    Any,
    /// `[...]` or `[!...]`: one character in (or, negated, not in) the inclusive ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Part {
    fn accepts(&self, c: char) -> bool {
        match self {
            Self::Literal(l) => *l == c,
            Self::One => true,
            Self::Any => false,
            Self::Class { negated, ranges } => {
                ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
            }
        }
    }
}

/// An fnmatch pattern compiled once, matched without exponential backtracking.
#[derive(Debug)]
struct Glob {
    parts: Vec<Part>,
}

impl Glob {
    /// Compiles `pattern`; `None` when it is malformed (an unclosed `[`).
    fn parse(pattern: &str) -> Option<Self> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            match c {
                // Consecutive stars match what one does; keeping one keeps matching linear in them.
                '*' if parts.last() == Some(&Part::Any) => {}
                '*' => parts.push(Part::Any),
                '?' => parts.push(Part::One),
                '[' => {
                    let (class, next) = parse_class(&chars, i)?;
                    parts.push(class);
                    i = next;
                }
                _ => parts.push(Part::Literal(c)),
            }
        }
        Some(Self { parts })
    }

    /// 1000 plus its length for a pattern without wildcards, else its count of literal characters.
    fn specificity(&self) -> usize {
        let literals = self
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Literal(_)))
            .count();
        if literals == self.parts.len() {
            1000 + literals
        } else {
            literals
        }
    }

    /// Whether the whole of `name` matches: the iterative two-pointer algorithm, which on a
    /// mismatch only retries from the last `*` (O(pattern × name) at worst).
    fn matches(&self, name: &[char]) -> bool {
        let (mut p, mut n) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while let Some(&c) = name.get(n) {
            match self.parts.get(p) {
                Some(Part::Any) => {
                    star = Some((p, n));
                    p += 1;
                    continue;
                }
                Some(part) if part.accepts(c) => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
            match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            }
        }
        self.parts
            .get(p..)
            .is_some_and(|rest| rest.iter().all(|part| *part == Part::Any))
    }
}

/// Parses a bracket class whose content starts at `start` (just after `[`); returns the class
/// and the index after its `]`, or `None` when it is never closed. As in fnmatch, a `]` first
/// (after an optional `!`) is literal, and a `-` first or last is literal.
fn parse_class(chars: &[char], start: usize) -> Option<(Part, usize)> {
    let mut i = start;
    let negated = chars.get(i) == Some(&'!');
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Part::Class { negated, ranges }, i + 1));
        }
        first = false;
        match (chars.get(i + 1), chars.get(i + 2)) {
            (Some('-'), Some(&hi)) if hi != ']' => {
                ranges.push((c, hi));
                i += 3;
            }
            _ => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use workmate_tools::ToolMetadata;

    use super::*;

    fn rule(pattern: &str, risk: RiskClass) -> RiskOverride {
        RiskOverride {
            pattern: pattern.into(),
            risk,
        }
    }

    fn glob(pattern: &str, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        Glob::parse(pattern).is_some_and(|g| g.matches(&name))
    }

    fn approval() -> ToolMetadata {
        ToolMetadata {
            requires_approval: true,
            ..ToolMetadata::read("connector")
        }
    }

    #[test]
    fn base_table_and_metadata() {
        for tool in [
            "write_file",
            "replace_in_file",
            "apply_patch",
            "apply_unified_diff",
            "remember",
            "memory_update",
            "memory_forget",
        ] {
            assert_eq!(classify(tool, None, &[]), RiskClass::WriteLocal, "{tool}");
        }
        assert_eq!(classify("run_shell", None, &[]), RiskClass::Exec);
        assert_eq!(classify("web_fetch", None, &[]), RiskClass::External);
        assert_eq!(classify("memory_read", None, &[]), RiskClass::Read);
        assert_eq!(
            classify("send_message", Some(&approval()), &[]),
            RiskClass::External
        );
        assert_eq!(
            classify("read_file", Some(&ToolMetadata::read("files")), &[]),
            RiskClass::Read
        );
        assert_eq!(classify("unknown_tool", None, &[]), RiskClass::Read);
        // The by-name table wins over metadata.
        assert_eq!(
            classify("run_shell", Some(&approval()), &[]),
            RiskClass::Exec
        );
    }

    #[test]
    fn overrides_win_over_table_and_metadata() {
        let overrides = [
            rule("run_shell", RiskClass::Read),
            rule("gmail_*", RiskClass::Read),
        ];
        assert_eq!(classify("run_shell", None, &overrides), RiskClass::Read);
        assert_eq!(
            classify("gmail_send_email", Some(&approval()), &overrides),
            RiskClass::Read
        );
        assert_eq!(
            classify("outlook_send_mail", Some(&approval()), &overrides),
            RiskClass::External
        );
        let raise = [rule("read_*", RiskClass::External)];
        assert_eq!(classify("read_file", None, &raise), RiskClass::External);
    }

    #[test]
    fn most_specific_override_wins() {
        let overrides = [
            rule("*", RiskClass::External),
            rule("gmail_*", RiskClass::WriteLocal),
            rule("gmail_send_*", RiskClass::Exec),
        ];
        assert_eq!(
            classify("gmail_send_email", None, &overrides),
            RiskClass::Exec
        );
        assert_eq!(
            classify("gmail_list", None, &overrides),
            RiskClass::WriteLocal
        );
        assert_eq!(
            classify("slack_post", None, &overrides),
            RiskClass::External
        );
        // An exact name beats any glob, even a longer one.
        let exact = [
            rule("gmail_send_email_*?", RiskClass::External),
            rule("ab", RiskClass::Read),
        ];
        assert_eq!(classify("ab", None, &exact), RiskClass::Read);
        let longer = [rule("a*", RiskClass::Exec), rule("ab", RiskClass::External)];
        assert_eq!(classify("ab", None, &longer), RiskClass::External);
    }

    #[test]
    fn ties_go_to_the_first_listed() {
        let overrides = [rule("a*", RiskClass::Exec), rule("*a", RiskClass::External)];
        assert_eq!(classify("aa", None, &overrides), RiskClass::Exec);
        let swapped = [rule("*a", RiskClass::External), rule("a*", RiskClass::Exec)];
        assert_eq!(classify("aa", None, &swapped), RiskClass::External);
    }

    #[test]
    fn malformed_overrides_are_skipped() {
        let overrides = [
            rule("run_[shell", RiskClass::Read),
            rule("[", RiskClass::Read),
        ];
        assert_eq!(classify("run_shell", None, &overrides), RiskClass::Exec);
        assert_eq!(classify("[", None, &overrides), RiskClass::Read);
        assert_eq!(classify("run_[shell", None, &overrides), RiskClass::Read);
        let then_valid = [
            rule("run_[", RiskClass::Read),
            rule("run_*", RiskClass::External),
        ];
        assert_eq!(
            classify("run_shell", None, &then_valid),
            RiskClass::External
        );
    }

    #[test]
    fn fnmatch_semantics() {
        assert!(glob("*", ""));
        assert!(glob("*", "anything/at all"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(!glob("a?c", "abbc"));
        assert!(glob("a*c", "ac"));
        assert!(glob("a*c", "abbbc"));
        assert!(!glob("a*c", "abbbd"));
        assert!(glob("*_send_*", "gmail_send_email"));
        assert!(glob("[abc]x", "bx"));
        assert!(!glob("[abc]x", "dx"));
        assert!(glob("[!abc]x", "dx"));
        assert!(!glob("[!abc]x", "ax"));
        assert!(glob("[a-c]", "b"));
        assert!(!glob("[a-c]", "d"));
        assert!(glob("[]]", "]"));
        assert!(glob("[!]]", "a"));
        assert!(!glob("[!]]", "]"));
        assert!(glob("[a-]", "-"));
        assert!(glob("[-a]", "-"));
        assert!(!glob("[z-a]", "m"));
        assert!(glob("a]", "a]"));
        assert!(!glob("Run_Shell", "run_shell"), "case-sensitive");
        assert!(glob("ü*", "über"));
        assert!(!glob("abc", "abcd"));
        assert!(!glob("abcd", "abc"));
        assert!(glob("**a**", "bab"));
    }

    #[test]
    fn specificity_scores() {
        let score = |p: &str| Glob::parse(p).map(|g| g.specificity());
        assert_eq!(score("run_shell"), Some(1009));
        assert_eq!(score("run_*"), Some(4));
        assert_eq!(score("r?n_[sx]hell"), Some(7));
        assert_eq!(score("run_[shell"), None);
    }

    #[test]
    fn star_matching_does_not_backtrack_exponentially() {
        let name = "a".repeat(100_000);
        let pattern = format!("{}b", "*a".repeat(20));
        assert!(!glob(&pattern, &name));
        let overrides = [
            rule(&pattern, RiskClass::Exec),
            rule("a*a", RiskClass::External),
        ];
        assert_eq!(classify(&name, None, &overrides), RiskClass::External);
    }

    #[test]
    fn names_and_serde() {
        for (risk, name) in [
            (RiskClass::Read, "read"),
            (RiskClass::WriteLocal, "write_local"),
            (RiskClass::Exec, "exec"),
            (RiskClass::External, "external"),
        ] {
            assert_eq!(risk.as_str(), name);
            assert_eq!(serde_json::to_value(risk).unwrap(), serde_json::json!(name));
            assert_eq!(risk.is_consequential(), risk != RiskClass::Read);
        }
        let parsed: RiskOverride =
            serde_json::from_value(serde_json::json!({"pattern": "mcp_*", "risk": "write_local"}))
                .unwrap();
        assert_eq!(parsed, rule("mcp_*", RiskClass::WriteLocal));
    }

    fn any_risk() -> impl Strategy<Value = RiskClass> {
        prop_oneof![
            Just(RiskClass::Read),
            Just(RiskClass::WriteLocal),
            Just(RiskClass::Exec),
            Just(RiskClass::External),
        ]
    }

    fn any_rules() -> impl Strategy<Value = Vec<RiskOverride>> {
        let pattern = prop_oneof![any::<String>(), "[a-c_*?!\\[\\]-]{0,12}"];
        prop::collection::vec(
            (pattern, any_risk()).prop_map(|(pattern, risk)| RiskOverride { pattern, risk }),
            0..6,
        )
    }

    proptest! {
        #[test]
        fn classify_never_panics_and_is_deterministic(
            tool in prop_oneof![any::<String>(), "[a-c_]{0,12}"],
            approval in any::<bool>(),
            rules in any_rules(),
        ) {
            let metadata = ToolMetadata { requires_approval: approval, ..ToolMetadata::read("x") };
            let first = classify(&tool, Some(&metadata), &rules);
            prop_assert_eq!(first, classify(&tool, Some(&metadata), &rules));
            let without = classify(&tool, None, &rules);
            prop_assert_eq!(without, classify(&tool, None, &rules));
        }

        #[test]
        fn an_exact_override_always_wins(
            tool in "[a-z_]{1,12}",
            risk in any_risk(),
            rules in any_rules(),
        ) {
            let mut all = rules;
            all.push(RiskOverride { pattern: tool.clone(), risk });
            // Only another identical exact pattern listed earlier can tie (and wins the tie).
            let expected = all.iter().find(|r| r.pattern == tool).map_or(risk, |r| r.risk);
            prop_assert_eq!(classify(&tool, None, &all), expected);
        }
    }
}
