//! The classifier behind the session's read-only grant (spec §3.5): whether a shell command only
//! reads local state.
//!
//! Invariant: a command is accepted only when every program the shell would start is a known
//! local read whose words were read with certainty. Whatever could make the shell or the program
//! do more than it appears to — separators, redirections, substitutions, parameter or brace
//! expansion, globs where an option could hide, unknown options, environment that loads code — is
//! refused, so a mistake here costs a prompt, never a write.

mod git;
mod heads;
mod lexer;
mod sed;

use lexer::{Token, Word};
use workmate_tools::Root;

/// Programs that only read, whatever their arguments (but the few `heads::plain_ok` checks).
const SAFE_HEADS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "nl",
    "sort",
    "uniq",
    "cut",
    "tr",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ugrep",
    "file",
    "stat",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "which",
    "whoami",
    "id",
    "date",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "jq",
    "column",
    "diff",
    "comm",
    "strings",
    "md5sum",
    "shasum",
    "sha1sum",
    "sha256sum",
    "hexdump",
    "xxd",
    "od",
    "true",
    "false",
    "yamllint",
    "actionlint",
];

/// Safe heads with no option that writes or runs anything, so a glob expanding to a file named
/// like an option cannot change what they do.
const GLOB_TOLERANT_HEADS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "nl",
    "cut",
    "tr",
    "grep",
    "egrep",
    "fgrep",
    "stat",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "which",
    "whoami",
    "id",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "jq",
    "column",
    "diff",
    "comm",
    "strings",
    "md5sum",
    "shasum",
    "sha1sum",
    "sha256sum",
    "hexdump",
    "od",
    "true",
    "false",
    "yamllint",
];

/// Environment variables that make a program load or run other code, or read another config.
const DANGEROUS_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "ENV",
    "SHELLOPTS",
    "PS4",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "PROMPT_COMMAND",
    "SHELL",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "TMPDIR",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "GLIBC_TUNABLES",
    "OPENSSL_CONF",
    "RIPGREP_CONFIG_PATH",
    "AWKPATH",
    "AWKLIBPATH",
    "TERMINFO",
    "LOCALE_ARCHIVE",
    "ZDOTDIR",
];

/// Prefixes of environment variable names in the same family.
const DANGEROUS_ENV_PREFIXES: &[&str] = &[
    "LD_", "DYLD_", "GIT_", "BASH", "SSH_", "PERL", "PYTHON", "RUBY", "NODE_", "LESS", "XDG_",
    "MALLOC_",
];

/// Whether `command` is a single command or a pure `|` pipeline of local reads of the session's
/// folders: every argument that could name a file must resolve inside one of `roots` (relative
/// ones against the first, where the shell tool runs), so `cat ../../x`, `cat /etc/passwd` or a
/// symlink out of the workspace is not read-only.
pub fn is_read_only_command(command: &str, roots: &[Root]) -> bool {
    // Without a folder the shell tool runs nothing, and a relative path would have no anchor.
    !roots.is_empty()
        && read_only_args(command).is_some_and(|args| {
            args.iter()
                .all(|arg| super::paths::word_inside_roots(roots, arg))
        })
}

/// The arguments of every program of `command` when it only reads (wherever its files are).
fn read_only_args(command: &str) -> Option<Vec<String>> {
    if ["`", "$(", "<(", ">(", "\0"]
        .iter()
        .any(|s| command.contains(s))
    {
        return None;
    }
    let tokens = lexer::lex(command)?;
    let mut stages = Vec::new();
    let mut stage = Vec::new();
    for token in tokens {
        match token {
            Token::Word(word) => stage.push(word),
            Token::Op(op) if op == "|" => stages.push(std::mem::take(&mut stage)),
            Token::Op(_) => return None,
        }
    }
    stages.push(stage);
    if !stages.iter().all(|stage| stage_ok(stage)) {
        return None;
    }
    Some(
        stages
            .into_iter()
            .flat_map(|stage| {
                stage
                    .into_iter()
                    .skip_while(|w| w.assigns.is_some())
                    .skip(1)
                    .map(|w| w.text)
            })
            .collect(),
    )
}

fn dangerous_env(name: &str) -> bool {
    DANGEROUS_ENV.contains(&name) || DANGEROUS_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether one pipeline stage (assignments, then a command and its arguments) only reads.
fn stage_ok(words: &[Word]) -> bool {
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        let Some(name) = &first.assigns else { break };
        if dangerous_env(name) {
            return false;
        }
        rest = tail;
    }
    let Some((head, args)) = rest.split_first() else {
        return false;
    };
    let head = head.text.as_str();
    if head.contains('/') {
        return false;
    }
    if !GLOB_TOLERANT_HEADS.contains(&head) && args.iter().any(|a| a.glob) {
        return false;
    }
    let args: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match head {
        "env" => args.is_empty(),
        "command" => heads::command_ok(&args),
        "sed" => sed::sed_ok(&args),
        "awk" | "gawk" | "mawk" | "nawk" => heads::awk_ok(&args),
        "find" => heads::find_ok(&args),
        "git" => git::git_ok(&args),
        _ if SAFE_HEADS.contains(&head) => heads::plain_ok(head, &args),
        _ => false,
    }
}

/// Whether `command` only reads, wherever its files are (the tests of the syntax).
#[cfg(test)]
fn reads_only(command: &str) -> bool {
    read_only_args(command).is_some()
}

#[cfg(test)]
fn accepts(commands: &[&str]) {
    for command in commands {
        assert!(reads_only(command), "should accept {command:?}");
    }
}

#[cfg(test)]
fn rejects(commands: &[&str]) {
    for command in commands {
        assert!(!reads_only(command), "should reject {command:?}");
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn paths_outside_the_roots_are_not_read_only() {
        let base = std::env::temp_dir().join(format!("workmate-ro-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        let _ = std::os::unix::fs::symlink(base.join("outside"), root.join("escape"));
        let root = root.canonicalize().unwrap();
        let roots = [Root {
            path: root.clone(),
            writable: true,
        }];
        let inside = format!("cat {}/src/x", root.display());
        for command in [
            "cat Cargo.toml",
            "ls -la src",
            "grep -rn foo src | head",
            &inside,
        ] {
            assert!(is_read_only_command(command, &roots), "{command}");
        }
        for command in [
            "cat ../../../admin_token",
            "cat /etc/passwd",
            "cat /proc/self/environ",
            "cat ~/.ssh/id_rsa",
            "cat escape/secret",
            "ls escape",
            "grep -r x ..",
            "ls .*",
            "rg --ignore-file=/etc/x foo",
            "git -C ../other rev-parse HEAD",
            "find / -name x",
        ] {
            assert!(reads_only(command), "the syntax of {command} is read-only");
            assert!(!is_read_only_command(command, &roots), "{command}");
        }
        assert!(!is_read_only_command("ls", &[]), "no folder, no read");
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn plain_reads_and_pipelines() {
        accepts(&[
            "ls",
            "ls -la src",
            "  ls  ",
            "cat Cargo.toml",
            "grep x f | sort | uniq -c",
            "grep -rn 'fn main' src | head -20",
            "wc -l src/*.rs",
            "ls [ab]*",
            "echo 'a b' \"c d\"",
            "printf '%s\\n' a b",
            "jq '.a | .b' f.json",
            "grep -E 'a|b' f",
            "grep 'a;b' f",
            "grep 'a > b' f",
            "grep \"a&b\" f",
            "grep 'x$' f",
            "grep \"^$\" f",
            "grep foo$ f",
            "cat ~/notes.txt",
            "echo \\$HOME",
            "diff a b",
            "true",
            "pwd",
            "date +%Y-%m-%d",
            "date -d yesterday +%s",
            "sha256sum f | cut -d' ' -f1",
            "ls # ; rm -rf /",
            "ls a#b",
            "echo 'multi\nline'",
            "ls \\\n -la",
            "git rev-parse HEAD@{1}",
        ]);
    }

    #[test]
    fn spec_rejections() {
        rejects(&[
            "",
            "   ",
            "ls; rm -rf /",
            "ls && rm x",
            "ls || rm x",
            "ls & rm x",
            "ls |& cat",
            "ls &",
            "cat a > b",
            "cat a >> b",
            "cat < a",
            "cat 2> err",
            "ls 2>&1",
            "cat <<EOF",
            "ls $(whoami)",
            "ls `whoami`",
            "diff <(ls a) <(ls b)",
            "tee >(cat)",
            "ls | | wc",
            "ls |",
            "| ls",
            "(ls)",
            "{ ls; }",
            "ls 'unbalanced",
            "ls \"unbalanced",
            "ls trailing\\",
            "/bin/ls",
            "./ls",
            "bin/cat f",
            "ls\nrm -rf /",
            "ls # comment\nrm -rf /",
            "ls\u{0}",
        ]);
    }

    #[test]
    fn unknown_heads_network_and_interpreters() {
        rejects(&[
            "rm -rf /",
            "tee out",
            "xargs rm",
            "ls | xargs rm",
            "grep x f | tee out",
            "curl https://example.com",
            "wget x",
            "nc -l 1",
            "ssh host",
            "scp a b:",
            "rsync a b",
            "python -c 'print(1)'",
            "python3 x.py",
            "perl -e 1",
            "ruby -e 1",
            "node x.js",
            "bash -c ls",
            "sh -c ls",
            "zsh",
            "php -r 1",
            "lua x",
            "ls | sh",
            "time ls",
            "! ls",
            "sudo ls",
            "exec ls",
            "eval ls",
        ]);
    }

    #[test]
    fn look_alikes_are_not_safe_heads() {
        rejects(&["ls；rm", "ｌｓ", "ls\u{00a0}-la", "ls\r", "lѕ"]);
    }

    #[test]
    fn assignments() {
        accepts(&[
            "FOO=1 ls",
            "A=1 B='x y' grep a f",
            "LC_ALL=C sort f",
            "TZ=UTC date",
        ]);
        rejects(&[
            "FOO=1",
            "FOO=1 | ls",
            "\"FOO=1\" ls",
            "FOO=1 rm x",
            "FOO=$(id) ls",
            "PATH=/tmp ls",
            "LD_PRELOAD=/tmp/x.so ls",
            "GIT_EXTERNAL_DIFF=x git diff",
            "GIT_CONFIG_PARAMETERS=\"'core.pager=sh'\" git log",
            "BASH_ENV=/tmp/x egrep a f",
            "HOME=/tmp/x git status",
            "XDG_CONFIG_HOME=/tmp git status",
            "SSH_ASKPASS=/tmp/x git remote show origin",
            "PERL5OPT=-Mx shasum f",
        ]);
    }

    #[test]
    fn long_inputs_are_handled() {
        let arg = "a".repeat(100_000);
        assert!(reads_only(&format!("echo {arg}")));
        assert!(reads_only(&format!("grep x {}", "f ".repeat(50_000))));
        let pipeline = vec!["cat f"; 10_000].join(" | ");
        assert!(reads_only(&pipeline));
        assert!(!reads_only(&format!("{pipeline} ; rm x")));
        assert!(!reads_only(&format!("echo '{arg}")));
        assert!(!reads_only(&"|".repeat(100_000)));
        assert!(!reads_only(&"(".repeat(100_000)));
        let script = "p;".repeat(50_000);
        assert!(reads_only(&format!("sed -n '{script}' f")));
        assert!(!reads_only(&format!("sed -n '{script}w x' f")));
        assert!(!reads_only(&format!(
            "awk '{}system' f",
            "{".repeat(100_000)
        )));
        assert!(!reads_only(&format!("git {}", "-C x ".repeat(20_000))));
        let many_rules = "s/a/b/;".repeat(10_000);
        assert!(reads_only(&format!("sed '{many_rules}' f")));
    }

    const KNOWN_HEADS: [&str; 9] = [
        "sed",
        "awk",
        "git",
        "find",
        "sort",
        "date",
        "git branch",
        "git config",
        "xxd",
    ];

    const SEPARATORS: [&str; 7] = ["; ", " && ", " || ", " & ", "\n", " | ", " > "];

    proptest! {
        #[test]
        fn never_panics(command in any::<String>()) {
            let _ = reads_only(&command);
        }

        #[test]
        fn never_panics_on_shell_text(command in "[a-z |;&<>()$`'\"\\\\#={},.*\n\t-]{0,60}") {
            let _ = reads_only(&command);
        }

        #[test]
        fn never_panics_on_known_heads(
            head in prop::sample::select(KNOWN_HEADS.as_slice()),
            rest in "[a-z =;'\"\\\\{}/,.!$~:#\n-]{0,40}",
        ) {
            let _ = reads_only(&format!("{head} {rest}"));
        }

        #[test]
        fn a_second_command_is_never_accepted(
            args in "[a-z0-9 ._'\"-]{0,30}",
            sep in prop::sample::select(SEPARATORS.as_slice()),
        ) {
            let command = format!("ls {args}{sep}rm -rf /");
            prop_assert!(!reads_only(&command), "{:?}", command);
        }

        #[test]
        fn is_deterministic(command in "[a-z |;'\"-]{0,30}") {
            prop_assert_eq!(reads_only(&command), reads_only(&command));
        }
    }
}
