//! The shell lexer of the read-only classifier: words after quote removal and operator runs.
//!
//! Invariant: it yields words only when each is exactly what the program would receive: anything
//! that the shell would still expand (parameters, ANSI-C strings, braces) or that would start
//! another command (a line break) makes it refuse the whole command. Globs are reported, not
//! refused: whether one is harmless depends on the program.

/// How a character of a word was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Quote {
    /// Bare: subject to globbing, brace expansion and assignment syntax.
    Bare,
    /// Inside double quotes.
    Double,
    /// Inside single quotes or escaped by a backslash.
    Literal,
}

/// A shell word after quote removal.
#[derive(Debug)]
pub(super) struct Word {
    pub(super) text: String,
    /// The variable name when the word is a `NAME=value` assignment.
    pub(super) assigns: Option<String>,
    /// Whether it holds a bare `*`, `?` or `[` (the shell would expand it to file names).
    pub(super) glob: bool,
}

#[derive(Debug)]
pub(super) enum Token {
    Word(Word),
    /// A run of the operator characters `( ) ; < > | &`.
    Op(String),
}

/// Splits a command like a POSIX shell with operators as separate tokens (shlex with
/// `punctuation_chars`). `None` for anything it refuses to read: unbalanced quoting, a trailing
/// backslash, a line break outside quotes (a command separator), a parameter expansion or
/// ANSI-C string (`$x`, `${x:-…}`, `$'…'`) and a brace expansion (`{a,b}`, `{1..3}`).
pub(super) fn lex(command: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut word: Vec<(char, Quote)> = Vec::new();
    // Whether a word has started; `''` starts one without adding a character.
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => flush(&mut tokens, &mut word, &mut in_word)?,
            '\n' => return None,
            _ if is_operator(c) => {
                flush(&mut tokens, &mut word, &mut in_word)?;
                let mut op = String::from(c);
                while let Some(&next) = chars.peek().filter(|&&n| is_operator(n)) {
                    op.push(next);
                    chars.next();
                }
                tokens.push(Token::Op(op));
            }
            // A comment runs to the end of the line; a line after it would be another command.
            '#' if !in_word => {
                if chars.any(|ch| ch == '\n') {
                    return None;
                }
            }
            '\\' => match chars.next()? {
                '\n' => {}
                escaped => {
                    in_word = true;
                    word.push((escaped, Quote::Literal));
                }
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        quoted => word.push((quoted, Quote::Literal)),
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
                            escaped @ ('\\' | '"' | '$' | '`') => {
                                word.push((escaped, Quote::Literal));
                            }
                            other => {
                                word.push(('\\', Quote::Double));
                                word.push((other, Quote::Double));
                            }
                        },
                        '$' if !literal_dollar(chars.peek().copied(), true) => return None,
                        quoted => word.push((quoted, Quote::Double)),
                    }
                }
            }
            '$' if !literal_dollar(chars.peek().copied(), false) => return None,
            _ => {
                in_word = true;
                word.push((c, Quote::Bare));
            }
        }
    }
    flush(&mut tokens, &mut word, &mut in_word)?;
    Some(tokens)
}

fn is_operator(c: char) -> bool {
    matches!(c, '(' | ')' | ';' | '<' | '>' | '|' | '&')
}

/// Whether a `$` followed by `next` stays a plain `$` (at the end of a word or of a quote).
fn literal_dollar(next: Option<char>, in_double_quotes: bool) -> bool {
    match next {
        None | Some(' ' | '\t') => true,
        Some('"') => in_double_quotes,
        Some(_) => false,
    }
}

/// Ends the current word, if one started. `None` when it would undergo brace expansion.
fn flush(tokens: &mut Vec<Token>, word: &mut Vec<(char, Quote)>, in_word: &mut bool) -> Option<()> {
    if !std::mem::take(in_word) {
        return Some(());
    }
    let chars = std::mem::take(word);
    if brace_expands(&chars) {
        return None;
    }
    tokens.push(Token::Word(Word {
        text: chars.iter().map(|&(c, _)| c).collect(),
        assigns: assignment_name(&chars),
        glob: chars
            .iter()
            .any(|&(c, q)| q == Quote::Bare && matches!(c, '*' | '?' | '[')),
    }));
    Some(())
}

/// Whether a bare `{` is followed by a bare `,` or `..`: the shell would turn it into several
/// words (`{-i,x}` becomes `-i x`). Conservative: it does not check that the braces close.
fn brace_expands(chars: &[(char, Quote)]) -> bool {
    let mut open = false;
    let mut dot = false;
    for &(c, q) in chars {
        let bare = q == Quote::Bare;
        if bare && c == '{' {
            open = true;
        } else if open && bare && (c == ',' || (c == '.' && dot)) {
            return true;
        }
        dot = bare && c == '.';
    }
    false
}

/// The name assigned when the word is `NAME=value` with the name and `=` unquoted.
fn assignment_name(chars: &[(char, Quote)]) -> Option<String> {
    let eq = chars.iter().position(|&(c, _)| c == '=')?;
    let name = chars.get(..eq)?;
    let (&(first, _), _) = name.split_first()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && name
            .iter()
            .all(|&(c, q)| q == Quote::Bare && (c.is_ascii_alphanumeric() || c == '_'))
        && chars.get(eq).is_some_and(|&(_, q)| q == Quote::Bare);
    valid.then(|| name.iter().map(|&(c, _)| c).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens as strings, operators in angle brackets.
    fn tokens(command: &str) -> Option<Vec<String>> {
        let tokens = lex(command)?;
        Some(
            tokens
                .into_iter()
                .map(|t| match t {
                    Token::Word(w) => w.text,
                    Token::Op(op) => format!("<{op}>"),
                })
                .collect(),
        )
    }

    #[test]
    fn operators_are_separate_tokens() {
        let expect = |s: &str, want: &[&str]| {
            assert_eq!(
                tokens(s),
                Some(want.iter().map(|w| (*w).to_owned()).collect()),
                "{s:?}"
            );
        };
        expect("a|b", &["a", "<|>", "b"]);
        expect("a && b", &["a", "<&&>", "b"]);
        expect("a |& b", &["a", "<|&>", "b"]);
        expect("a 2>&1", &["a", "2", "<>&>", "1"]);
        expect("a>>b", &["a", "<>>>", "b"]);
        expect("(a)", &["<(>", "a", "<)>"]);
        expect("a ';' \\| \\;", &["a", ";", "|", ";"]);
        expect("a '' \"\"", &["a", "", ""]);
        expect("ls # x; y", &["ls"]);
        expect("ls a#b", &["ls", "a#b"]);
        expect("ls；rm", &["ls；rm"]);
    }

    #[test]
    fn expansions_are_refused() {
        for command in [
            "echo $HOME",
            "echo \"$HOME\"",
            "echo ${HOME}",
            "sed ${X:--i} s/a/b/ f",
            "find . ${X:--delete}",
            "sed $'-\\x69' s/a/b/ f",
            "echo $\"x\"",
            "echo $((1+1))",
            "echo $[1+1]",
            "sed {-i,s/a/b/} f",
            "find . {-delete,}",
            "git {push,}",
            "echo {1..3}",
            "echo a{b,c}",
            "ls\nrm",
            "ls # x\nrm",
        ] {
            assert_eq!(tokens(command), None, "{command:?}");
        }
        for command in [
            "echo '{a,b}'",
            "echo \\{a,b}",
            "echo {a\\,b}",
            "echo 'a\nb'",
            "grep x$ f",
        ] {
            assert!(tokens(command).is_some(), "{command:?}");
        }
    }

    #[test]
    fn words_know_assignments_and_globs() {
        let Some(tokens) = lex("A_1=x \"B=y\" C\\=z D='=' *.rs '*' \\? [ab]") else {
            panic!("should lex");
        };
        let words: Vec<&Word> = tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w),
                Token::Op(_) => None,
            })
            .collect();
        let assigns: Vec<Option<&str>> = words.iter().map(|w| w.assigns.as_deref()).collect();
        assert_eq!(
            assigns,
            [Some("A_1"), None, None, Some("D"), None, None, None, None]
        );
        let globs: Vec<bool> = words.iter().map(|w| w.glob).collect();
        assert_eq!(
            globs,
            [false, false, false, false, true, false, false, true]
        );
    }
}
