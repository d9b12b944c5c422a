//! The shell allowlist (spec §3.4): command prefixes a tenant lets run without asking.
//!
//! Invariants: a command with any shell metacharacter (a separator, pipe, redirect, substitution,
//! subshell or line break) is never allowed, whatever the allowlist holds; otherwise a command is
//! allowed only when an entry's words are a prefix of its words, compared word by word, so `ls`
//! never allows `lsof` and `git status` never allows `git push`. The default list is empty.

use super::shell_words::split_words;

/// Whether the raw text holds anything that would let the shell run more than one plain command:
/// `;` `&` `|` `>` `<` `` ` `` `$(` `(`, a newline or a carriage return.
pub fn has_shell_operator(command: &str) -> bool {
    command.contains([';', '&', '|', '>', '<', '`', '(', '\n', '\r']) || command.contains("$(")
}

/// Whether `command` may run without asking because an allowlist entry is a word prefix of it.
/// Entries that do not split (unbalanced quotes) or are empty are ignored.
pub fn command_allowed(command: &str, allowlist: &[String]) -> bool {
    if has_shell_operator(command) {
        return false;
    }
    let Some(words) = split_words(command) else {
        return false;
    };
    if words.is_empty() {
        return false;
    }
    allowlist
        .iter()
        .filter_map(|entry| split_words(entry))
        .any(|prefix| {
            !prefix.is_empty()
                && words
                    .get(..prefix.len())
                    .is_some_and(|head| head == prefix.as_slice())
        })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn word_prefixes_match() {
        let allow = list(&["git status", "ls", "cargo test -p"]);
        assert!(command_allowed("git status", &allow));
        assert!(command_allowed("git status -s", &allow));
        assert!(command_allowed("git   status\t-s", &allow));
        assert!(
            command_allowed("'git' \"status\"", &allow),
            "quoting does not change the words"
        );
        assert!(!command_allowed("git statusfoo", &allow));
        assert!(!command_allowed("git push", &allow));
        assert!(!command_allowed("git", &allow));
        assert!(command_allowed("ls -la src", &allow));
        assert!(!command_allowed("lsof", &allow));
        assert!(!command_allowed("cargo test", &allow));
        assert!(command_allowed("cargo test -p workmate-engine", &allow));
        assert!(
            !command_allowed("git\\ status", &allow),
            "one word `git status` is not two"
        );
    }

    #[test]
    fn operators_are_never_allowed() {
        let allow = list(&["ls", "git status", "echo"]);
        for command in [
            "ls; rm -rf /",
            "ls && rm x",
            "ls || rm x",
            "ls | sh",
            "ls > out",
            "ls < in",
            "ls &",
            "echo `id`",
            "echo $(id)",
            "ls (x)",
            "ls\nrm -rf /",
            "ls\rrm",
            "git status;rm",
            "echo ';'",
        ] {
            assert!(has_shell_operator(command), "{command:?}");
            assert!(!command_allowed(command, &allow), "{command:?}");
        }
        assert!(!has_shell_operator("git status -s $HOME"));
        assert!(
            !has_shell_operator("ls；rm"),
            "a fullwidth semicolon is an ordinary character"
        );
    }

    #[test]
    fn empty_or_unparseable_is_refused() {
        let allow = list(&["ls", "echo"]);
        assert!(!command_allowed("", &allow));
        assert!(!command_allowed("   ", &allow));
        assert!(!command_allowed("echo 'open", &allow));
        assert!(!command_allowed("echo trailing\\", &allow));
        assert!(!command_allowed("ls", &[]), "the default list is empty");
    }

    #[test]
    fn bad_entries_are_skipped() {
        let allow = list(&["", "   ", "git 'status", "ls"]);
        assert!(command_allowed("ls -l", &allow));
        assert!(!command_allowed("git status", &allow));
        assert!(
            !command_allowed("anything", &list(&[""])),
            "an empty entry allows nothing"
        );
    }

    #[test]
    fn look_alikes_do_not_match() {
        let allow = list(&["ls"]);
        assert!(!command_allowed("ls；rm", &allow));
        assert!(!command_allowed("ｌｓ", &allow));
    }

    #[test]
    fn long_input() {
        let allow = list(&["echo"]);
        let long = format!("echo {}", "a ".repeat(50_000));
        assert!(command_allowed(&long, &allow));
        let with_operator = format!("echo {};", "a ".repeat(50_000));
        assert!(!command_allowed(&with_operator, &allow));
    }

    const OPERATORS: [&str; 11] = [";", "&", "|", ">", "<", "`", "$(", "(", "\n", "\r", "&&"];

    proptest! {
        #[test]
        fn never_panics(
            command in any::<String>(),
            entries in prop::collection::vec(any::<String>(), 0..4),
        ) {
            let _ = has_shell_operator(&command);
            let _ = command_allowed(&command, &entries);
        }

        #[test]
        fn is_deterministic(
            command in "[a-c '\"\\\\-]{0,20}",
            entries in prop::collection::vec("[a-c '\"\\\\-]{0,10}", 0..4),
        ) {
            let first = command_allowed(&command, &entries);
            prop_assert_eq!(first, command_allowed(&command, &entries));
        }

        #[test]
        fn no_entry_allows_an_operator(
            before in any::<String>(),
            op in prop::sample::select(OPERATORS.as_slice()),
            after in any::<String>(),
            mut entries in prop::collection::vec(any::<String>(), 0..4),
        ) {
            let command = format!("{before}{op}{after}");
            // Even the command itself, and what precedes the operator, as entries.
            entries.push(command.clone());
            entries.push(before);
            prop_assert!(has_shell_operator(&command));
            prop_assert!(!command_allowed(&command, &entries));
        }

        #[test]
        fn adding_an_entry_never_disallows(
            command in "[a-c ]{0,12}",
            entries in prop::collection::vec("[a-c ]{0,6}", 0..4),
            extra in "[a-c ]{0,6}",
        ) {
            let before = command_allowed(&command, &entries);
            let mut more = entries;
            more.push(extra);
            prop_assert!(!before || command_allowed(&command, &more));
        }

        #[test]
        fn a_command_is_allowed_by_itself(
            words in prop::collection::vec("[a-z0-9_.-]{1,8}", 1..6),
        ) {
            let command = words.join(" ");
            prop_assert!(command_allowed(&command, std::slice::from_ref(&command)));
        }
    }
}
