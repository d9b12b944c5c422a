//! `sed` for the read-only classifier: accepted only when it cannot write or execute.
//!
//! Invariant: options are known exactly (no abbreviations, so `--in` is not read as harmless),
//! and the script is read the way GNU sed reads it, command by command, so a `w`/`W` command,
//! a `w`/`e` flag of `s` or an `e` command is found wherever it acts as one; whatever the reader
//! does not understand is refused.

/// `sed` that only prints: no in-place editing, no script file, and a script without commands
/// or flags that write (`w`, `W`) or execute (`e`).
pub(super) fn sed_ok(args: &[&str]) -> bool {
    const FLAGS: &[&str] = &[
        "quiet",
        "silent",
        "regexp-extended",
        "posix",
        "debug",
        "sandbox",
        "separate",
        "unbuffered",
        "null-data",
        "zero-terminated",
        "help",
        "version",
    ];
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            operands.push(arg);
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            // Exact names only: an abbreviation (`--in`) could be `--in-place`.
            match long.split_once('=') {
                Some(("expression", script)) => scripts.push(script),
                Some(("line-length", _)) => {}
                None if long == "expression" => {
                    let Some(&script) = args.get(i) else {
                        return false;
                    };
                    scripts.push(script);
                    i += 1;
                }
                None if long == "line-length" => i += 1,
                None if FLAGS.contains(&long) => {}
                _ => return false,
            }
            continue;
        }
        let cluster = arg.get(1..).unwrap_or("");
        for (pos, c) in cluster.char_indices() {
            match c {
                'n' | 'E' | 'r' | 's' | 'u' | 'z' => {}
                'e' | 'l' => {
                    let mut value = cluster.get(pos + 1..).unwrap_or("");
                    if value.is_empty() {
                        let Some(&next) = args.get(i) else {
                            return false;
                        };
                        value = next;
                        i += 1;
                    }
                    if c == 'e' {
                        scripts.push(value);
                    }
                    break;
                }
                // `-i` edits in place, `-f` reads a script we cannot see; anything else is unknown.
                _ => return false,
            }
        }
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(&script) => scripts.push(script),
            None => return false,
        }
    }
    SedScript::new(&scripts.join("\n")).only_prints()
}

/// A conservative reader of GNU sed scripts: it knows where each command's text, file name,
/// label, regex and replacement end, so a `w`, `W` or `e` is found wherever it acts as one.
struct SedScript {
    chars: Vec<char>,
    pos: usize,
}

impl SedScript {
    fn new(script: &str) -> Self {
        Self {
            chars: script.chars().collect(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn skip_while(&mut self, f: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&f) {
            self.pos += 1;
        }
    }

    fn skip_blanks(&mut self) {
        self.skip_while(|c| c == ' ' || c == '\t');
    }

    /// Whether the whole script parses and nothing in it writes or executes.
    fn only_prints(&mut self) -> bool {
        self.commands().is_some()
    }

    fn commands(&mut self) -> Option<()> {
        loop {
            self.skip_while(|c| matches!(c, ' ' | '\t' | '\n' | ';'));
            if self.peek().is_none() {
                return Some(());
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.pos += 1;
                self.skip_blanks();
                self.second_address()?;
                self.skip_blanks();
            }
            while self.peek() == Some('!') {
                self.pos += 1;
                self.skip_blanks();
            }
            match self.bump()? {
                '{' | '}' => continue,
                '#' => {
                    self.skip_while(|c| c != '\n');
                    continue;
                }
                // Labels end early here so that nothing after one is taken for label text.
                ':' | 'b' | 't' | 'T' | 'v' => {
                    self.skip_blanks();
                    self.skip_while(|c| !matches!(c, ';' | '\n' | ' ' | '\t' | '}' | '#'));
                }
                'a' | 'i' | 'c' | 'r' | 'R' => self.rest_of_line(),
                '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
                | 'F' => {}
                'l' | 'L' | 'q' | 'Q' => {
                    self.skip_blanks();
                    self.skip_while(|c| c.is_ascii_digit());
                }
                's' => {
                    let delim = self.delimiter()?;
                    self.delimited(delim)?;
                    self.delimited(delim)?;
                    loop {
                        match self.peek() {
                            Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.pos += 1,
                            Some(c) if c.is_ascii_digit() => self.pos += 1,
                            _ => break,
                        }
                    }
                }
                'y' => {
                    let delim = self.delimiter()?;
                    self.delimited(delim)?;
                    self.delimited(delim)?;
                }
                // `w`/`W` write a file, `e` runs a command; anything else is not understood.
                _ => return None,
            }
            self.end_of_command()?;
        }
    }

    /// Text, or a file name, up to an unescaped newline.
    fn rest_of_line(&mut self) {
        while let Some(c) = self.bump() {
            match c {
                '\\' => {
                    self.bump();
                }
                '\n' => return,
                _ => {}
            }
        }
    }

    fn end_of_command(&mut self) -> Option<()> {
        self.skip_blanks();
        match self.peek() {
            None | Some('}' | '#') => Some(()),
            Some(';' | '\n') => {
                self.pos += 1;
                Some(())
            }
            Some(_) => None,
        }
    }

    fn address(&mut self) -> Option<()> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.skip_while(|c| c.is_ascii_digit());
                if self.peek() == Some('~') {
                    self.pos += 1;
                    self.skip_while(|c| c.is_ascii_digit());
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.delimited('/')?;
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            Some('\\') => {
                self.pos += 1;
                let delim = self.delimiter()?;
                self.delimited(delim)?;
                self.skip_while(|c| c == 'I' || c == 'M');
            }
            _ => {}
        }
        Some(())
    }

    fn second_address(&mut self) -> Option<()> {
        match self.peek() {
            Some('+' | '~') => {
                self.pos += 1;
                self.skip_while(|c| c.is_ascii_digit());
                Some(())
            }
            _ => self.address(),
        }
    }

    fn delimiter(&mut self) -> Option<char> {
        self.bump().filter(|&d| d != '\n' && d != '\\')
    }

    /// Skips to just after the next unescaped `delim`; `None` at the end or at a bare newline.
    fn delimited(&mut self, delim: char) -> Option<()> {
        loop {
            match self.bump()? {
                '\\' => {
                    self.bump()?;
                }
                '\n' => return None,
                c if c == delim => return Some(()),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{accepts, rejects};
    use super::SedScript;

    #[test]
    fn sed() {
        accepts(&[
            "sed -n 1,10p f",
            "sed 's/a/b/g' f",
            "sed -n 's/hello/world/p' f",
            "sed -e 's/a/b/' -e '/x/d' f",
            "sed --expression='s/e/w/' f",
            "sed -nE '/^fn /p' src/lib.rs",
            "sed -ne 's/x/y/p' f",
            "sed '$!d' f",
            "sed '1~2d;/start/,/end/{s/a/b/2;p}' f",
            "sed 'y/abc/xyz/' f",
            "sed '/x/a appended w text' f",
            "sed -n '/x/{p;q}' f",
            "sed 's|/usr|/opt|g' f",
            "sed 's/a\\/w/b/' f",
            "sed ':a;N;$!ba;s/\\n/ /g' f",
            "cat f | sed 1d",
        ]);
        rejects(&[
            "sed -i s/a/b/ f",
            "sed -i.bak s/a/b/ f",
            "sed -ni p f",
            "sed -Ei s/a/b/ f",
            "sed --in-place s/a/b/ f",
            "sed --in-place=.bak s/a/b/ f",
            "sed --in p f",
            "sed s/a/b/ -i f",
            "sed -f script.sed f",
            "sed --file=script.sed f",
            "sed -n 'w out' f",
            "sed 'w out' f",
            "sed '1W out' f",
            "sed 's/a/b/w out' f",
            "sed 's/a/b/gw out' f",
            "sed -n '/x/w out' f",
            "sed '$!{w out\n}' f",
            "sed 'e id' f",
            "sed 's/a/id/e' f",
            "sed '1e id' f",
            "sed -e p -e 'w out' f",
            "sed",
            "sed 's/a/b' f",
            "sed 'k' f",
            "sed -z --frobnicate p f",
        ]);
    }

    #[test]
    fn sed_script_reader() {
        let ok = |s: &str| SedScript::new(s).only_prints();
        assert!(ok(""));
        assert!(ok("#n\np"));
        assert!(ok("1!G;h;$!d"));
        assert!(ok("/a/,+3d"));
        assert!(ok("0,/x/s//y/"));
        assert!(ok("\\,x,p"));
        assert!(ok("/x/I,/y/Mp"));
        assert!(ok("a\\\ntext w x\\\nmore"));
        assert!(ok("r input"));
        assert!(ok("l 40;q 5"));
        assert!(!ok("a\\\ntext\nw out"));
        assert!(!ok("r in\nw out"));
        assert!(!ok("b end;w out"));
        assert!(!ok(":a w out"));
        assert!(!ok("s/x/y/;W out"));
        assert!(!ok("s/x/y/ge"));
        assert!(!ok("s\nx\ny\n"));
        assert!(!ok("/unterminated"));
        assert!(!ok("y/ab/c"));
    }
}
