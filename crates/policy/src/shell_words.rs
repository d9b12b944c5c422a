//! POSIX shell-word splitting, as Python's `shlex.split(s, posix=True)` does it.
//!
//! Invariant: never guesses. Unbalanced quoting or a trailing lone backslash yields `None`, so a
//! caller refuses what it cannot read. Operators (`|`, `;`, …) and `#` are ordinary characters
//! here: callers that care about them look at the raw text first.

/// Splits `command` into shell words: blanks separate words, single quotes keep everything
/// literally, double quotes let a backslash escape only `\`, `"`, `$`, `` ` `` and a newline,
/// and outside quotes a backslash escapes any character (a backslash-newline joins lines).
/// Quoted empty strings are words. `None` when the quoting does not balance.
pub fn split_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word has started; distinct from `!word.is_empty()` because `''` is a word.
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\\' => match chars.next()? {
                '\n' => {}
                escaped => {
                    in_word = true;
                    word.push(escaped);
                }
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        quoted => word.push(quoted),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            '\n' => {}
                            escaped @ ('\\' | '"' | '$' | '`') => word.push(escaped),
                            other => {
                                word.push('\\');
                                word.push(other);
                            }
                        },
                        quoted => word.push(quoted),
                    }
                }
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn split(s: &str) -> Option<Vec<&'static str>> {
        // Leaks are fine in a test: it keeps the assertions readable.
        split_words(s).map(|w| w.into_iter().map(|s| &*s.leak()).collect())
    }

    #[test]
    fn blanks_separate_words() {
        assert_eq!(split("git status -s"), Some(vec!["git", "status", "-s"]));
        assert_eq!(split("  a \t b\r\nc  "), Some(vec!["a", "b", "c"]));
        assert_eq!(split(""), Some(vec![]));
        assert_eq!(split("   "), Some(vec![]));
    }

    #[test]
    fn quotes() {
        assert_eq!(
            split("echo 'a b' \"c d\""),
            Some(vec!["echo", "a b", "c d"])
        );
        assert_eq!(split("a'b'c\"d\"e"), Some(vec!["abcde"]));
        assert_eq!(split("a '' \"\" b"), Some(vec!["a", "", "", "b"]));
        assert_eq!(split("'a \\ \" $x'"), Some(vec!["a \\ \" $x"]));
        assert_eq!(split("\"it's\""), Some(vec!["it's"]));
        assert_eq!(split("'multi\nline'"), Some(vec!["multi\nline"]));
    }

    #[test]
    fn backslashes() {
        assert_eq!(split("a\\ b"), Some(vec!["a b"]));
        assert_eq!(split("\\'x"), Some(vec!["'x"]));
        assert_eq!(
            split("a\\\nb"),
            Some(vec!["ab"]),
            "backslash-newline joins lines"
        );
        assert_eq!(split("\\\n"), Some(vec![]));
        assert_eq!(
            split(r#""\\ \" \$ \` \n \a""#),
            Some(vec![r#"\ " $ ` \n \a"#])
        );
        assert_eq!(split("\"a\\\nb\""), Some(vec!["ab"]));
    }

    #[test]
    fn unbalanced_quoting_is_refused() {
        assert_eq!(split("echo 'abc"), None);
        assert_eq!(split("echo \"abc"), None);
        assert_eq!(split("echo \"abc\\\""), None);
        assert_eq!(split("echo abc\\"), None);
        assert_eq!(split("'"), None);
    }

    #[test]
    fn operators_and_hash_are_ordinary() {
        assert_eq!(split("a|b"), Some(vec!["a|b"]));
        assert_eq!(split("a | b"), Some(vec!["a", "|", "b"]));
        assert_eq!(split("ls;rm"), Some(vec!["ls;rm"]));
        assert_eq!(
            split("echo # not a comment"),
            Some(vec!["echo", "#", "not", "a", "comment"])
        );
    }

    #[test]
    fn unicode_is_kept() {
        assert_eq!(split("ls；rm ｌｓ"), Some(vec!["ls；rm", "ｌｓ"]));
        assert_eq!(
            split("a\u{00a0}b"),
            Some(vec!["a\u{00a0}b"]),
            "only ASCII blanks split"
        );
    }

    #[test]
    fn long_input() {
        let long = "ab ".repeat(40_000);
        assert_eq!(split_words(&long).map(|w| w.len()), Some(40_000));
        let open = format!("'{}", "x".repeat(100_000));
        assert_eq!(split_words(&open), None);
    }

    proptest! {
        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = split_words(&s);
        }

        #[test]
        fn never_panics_on_shell_text(s in "[a-c '\"\\\\\n\t|;$`]{0,40}") {
            let _ = split_words(&s);
        }

        #[test]
        fn plain_words_round_trip(words in prop::collection::vec("[a-zA-Z0-9_./-]{1,8}", 0..8)) {
            prop_assert_eq!(split_words(&words.join(" ")), Some(words));
        }

        #[test]
        fn single_quoting_round_trips(word in "[^']{0,20}") {
            prop_assert_eq!(split_words(&format!("'{word}'")), Some(vec![word]));
        }
    }
}
