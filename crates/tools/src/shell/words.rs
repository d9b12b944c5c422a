//! Splits a command line into words the way a POSIX shell would quote them, without any of the
//! shell's other powers.
//!
//! Invariant: the result is exactly one program and its arguments. Anything a shell would treat as
//! an operator or an expansion (pipes, redirects, `;`, `&&`, subshells, `$VAR`, backticks, globs,
//! `~`, comments, `VAR=value` prefixes) is refused rather than passed through with a meaning the
//! caller did not intend.

const ONE_PROGRAM: &str = "only a single program with arguments runs (there is no shell: no \
pipes, redirects, ';', '&&' or subshells); run one command per call, or pass a script to an \
interpreter explicitly";

/// The words of `command`, or why it cannot run as a single program.
pub(crate) fn split(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word has started (so `''` yields an empty argument).
    let mut started = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '\'' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("unbalanced single quote".to_owned()),
                    }
                }
            }
            '"' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => return Err("unbalanced double quote".to_owned()),
                        },
                        Some('$') if expands(chars.peek().copied()) => return Err(expansion()),
                        Some('`') => return Err(expansion()),
                        Some(ch) => word.push(ch),
                        None => return Err("unbalanced double quote".to_owned()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(ch) => {
                    started = true;
                    word.push(ch);
                }
                None => return Err("the command ends with a lone backslash".to_owned()),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '\n' | '\r' => {
                return Err(format!(
                    "'{}' is a shell operator: {ONE_PROGRAM}",
                    c.escape_default()
                ));
            }
            '`' => return Err(expansion()),
            '$' if expands(chars.peek().copied()) => return Err(expansion()),
            '*' | '?' => {
                return Err(format!(
                    "'{c}' would be a glob pattern, but nothing is expanded here; quote it to pass \
                     it literally, or list the files explicitly"
                ));
            }
            '~' if !started => {
                return Err(
                    "'~' is not expanded; use a path relative to the working folder".into(),
                );
            }
            '#' if !started => {
                return Err(
                    "'#' would start a shell comment; quote it to pass it literally".into(),
                );
            }
            '=' if words.is_empty() && is_name(&word) && started => {
                return Err(format!(
                    "'{word}=…' would set an environment variable; that is not supported: {ONE_PROGRAM}"
                ));
            }
            ch => {
                started = true;
                word.push(ch);
            }
        }
    }
    if started {
        words.push(word);
    }
    if words.is_empty() || words[0].is_empty() {
        return Err("the command is empty".to_owned());
    }
    Ok(words)
}

fn expands(next: Option<char>) -> bool {
    next.is_some_and(|c| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | '{' | '(' | '?' | '$' | '!' | '#' | '@' | '*' | '-')
    })
}

fn expansion() -> String {
    "variables and command substitutions ($NAME, $(...), `...`) are not expanded here; write the \
     value itself, or single-quote it to pass it literally"
        .to_owned()
}

fn is_name(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_words() {
        let cases: [(&str, &[&str]); 8] = [
            ("echo hi", &["echo", "hi"]),
            ("  ls   -la  ", &["ls", "-la"]),
            ("echo 'a b' \"c d\"", &["echo", "a b", "c d"]),
            ("echo a\\ b", &["echo", "a b"]),
            (
                "echo \"say \\\"hi\\\"\" 'it''s'",
                &["echo", "say \"hi\"", "its"],
            ),
            ("echo ''", &["echo", ""]),
            (
                "grep -r 'a|b' '*.rs' \"x;y\"",
                &["grep", "-r", "a|b", "*.rs", "x;y"],
            ),
            (
                "git log --format=%H a=b",
                &["git", "log", "--format=%H", "a=b"],
            ),
        ];
        for (command, expected) in cases {
            assert_eq!(split(command).unwrap(), expected, "{command}");
        }
    }

    #[test]
    fn refuses_shell_features() {
        for command in [
            "ls | wc",
            "a; b",
            "a && b",
            "a || b",
            "echo > f",
            "cat < f",
            "sleep 1 &",
            "(ls)",
            "echo $HOME",
            "echo \"$HOME\"",
            "echo $(id)",
            "echo `id`",
            "ls *.rs",
            "cat ~/x",
            "FOO=1 env",
            "echo hi # c",
            "a\nb",
            "",
            "   ",
            "'unbalanced",
            "\"open",
            "trail\\",
            "echo \"${x}\"",
        ] {
            assert!(split(command).is_err(), "{command:?} should be refused");
        }
    }

    #[test]
    fn operator_errors_explain_the_rule() {
        let err = split("ls | wc").unwrap_err();
        assert!(err.contains("single program"), "{err}");
    }
}
