//! `git` for the read-only classifier: subcommands that read objects, refs and configuration
//! only, and the listing forms of `branch`, `tag`, `remote` and `config`.
//!
//! Invariant: no configuration can be injected (`-c`, `--config-env` and every other global
//! option but `-C` and `--no-pager` are refused), no option that writes a file or runs a
//! configured program passes, and a restricted form accepts only options it knows, so a name
//! that would create a branch or a tag, or a value that would set configuration, is refused.
//!
//! The repository itself is not trusted: the session's workspace is writable, so its
//! `.git/config` (or a bare repository's `config`, or a file it includes) may name programs git
//! runs on its own: `core.fsmonitor` whenever the index is read or refreshed (`status`, `diff`,
//! `ls-files`, `describe --dirty`, …), diff and textconv drivers (`diff`, `log -p`, `show`,
//! `blame`, `grep`), clean filters (`status`, `diff`), `gpg.program` for signatures
//! (`log.showSignature` turns them on for every `log`, `show`, `reflog`, `stash list`), hooks
//! such as `post-index-change`, and `core.sshCommand` (`remote show`). Per-driver keys cannot be
//! neutralised with a fixed set of `-c` overrides, so those subcommands are not read-only here:
//! they ask (or run from an allowlist entry an admin chose). What stays read-only never loads
//! the index or the work tree, never diffs and never checks a signature.

use super::heads::long_opt;

/// Git subcommands that only read (beyond the restricted forms checked one by one).
const GIT_READS: &[&str] = &[
    "rev-parse",
    "rev-list",
    "ls-tree",
    "cat-file",
    "name-rev",
    "merge-base",
    "count-objects",
    "var",
];

/// `git [-C dir] [--no-pager] SUBCOMMAND …` where the subcommand only reads. Any other global
/// option is refused: `-c` and `--config-env` set configuration that can run code.
pub(super) fn git_ok(args: &[&str]) -> bool {
    let mut i = 0;
    loop {
        match args.get(i) {
            Some(&"-C") => i += 2,
            Some(&"--no-pager") => i += 1,
            Some(arg) if arg.starts_with('-') => return false,
            Some(_) => break,
            None => return false,
        }
    }
    let Some((&sub, rest)) = args.get(i..).and_then(|a| a.split_first()) else {
        return false;
    };
    if rest.iter().any(|a| git_option_writes_or_runs(a)) {
        return false;
    }
    match sub {
        _ if GIT_READS.contains(&sub) => true,
        "branch" => git_branch_ok(rest),
        "tag" => git_tag_ok(rest),
        "remote" => git_remote_ok(rest),
        "config" => git_config_ok(rest),
        _ => false,
    }
}

/// Options of the reading subcommands that write a file or run a configured program; git
/// accepts unambiguous abbreviations of long options, so those are refused too.
fn git_option_writes_or_runs(arg: &str) -> bool {
    let key = arg.split_once('=').map_or(arg, |(key, _)| key);
    key.starts_with("--output")
        || long_opt(arg, "--output")
        || long_opt(arg, "--ext-diff")
        || (long_opt(arg, "--textconv") && key != "--text")
        || long_opt(arg, "--filters")
        || long_opt(arg, "--open-files-in-pager")
        || long_opt(arg, "--show-signature")
        // Signature placeholders (`%G?`, `%(signature)`) make git run `gpg.program`.
        || arg.contains("%G")
        || arg.contains("%(signature")
}

/// Options that select which refs to list (their values are refs, never new names).
const GIT_LIST_FILTERS: &[&str] = &[
    "--list",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
];

/// Whether `arg` is a list filter, alone or with `=value`.
fn git_list_filter(arg: &str) -> bool {
    let key = arg.split_once('=').map_or(arg, |(key, _)| key);
    GIT_LIST_FILTERS.contains(&key)
}

/// Display options shared by `git branch` and `git tag` listings.
fn git_list_display(arg: &str) -> bool {
    const FLAGS: &[&str] = &[
        "-i",
        "--ignore-case",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "--omit-empty",
    ];
    const VALUED: &[&str] = &["--sort=", "--format=", "--color=", "--column="];
    FLAGS.contains(&arg) || VALUED.iter().any(|p| arg.starts_with(p))
}

/// `git branch` that lists: names appear only as patterns or filters of a listing.
fn git_branch_ok(args: &[&str]) -> bool {
    const FLAGS: &[&str] = &[
        "--all",
        "--remotes",
        "--verbose",
        "-l",
        "--show-current",
        "--abbrev",
        "--no-abbrev",
    ];
    let mut listing = false;
    let mut names = 0;
    for &arg in args {
        let verbose_cluster = arg
            .strip_prefix('-')
            .is_some_and(|c| !c.is_empty() && c.chars().all(|c| "arv".contains(c)));
        match arg {
            _ if git_list_filter(arg) => listing = true,
            _ if FLAGS.contains(&arg) || git_list_display(arg) || arg.starts_with("--abbrev=") => {}
            _ if verbose_cluster => {}
            _ if arg.starts_with('-') => return false,
            _ => names += 1,
        }
    }
    names == 0 || listing
}

/// `git tag` that lists: with no arguments, or patterns only under `-l`/`--list` or a filter.
fn git_tag_ok(args: &[&str]) -> bool {
    let mut listing = false;
    let mut names = 0;
    for &arg in args {
        let lines = arg
            .strip_prefix("-n")
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
        match arg {
            _ if arg == "-l" || git_list_filter(arg) => listing = true,
            _ if lines || git_list_display(arg) => {}
            _ if arg.starts_with('-') => return false,
            _ => names += 1,
        }
    }
    names == 0 || listing
}

/// `git remote`, `git remote -v`, `git remote show NAME…`, `git remote get-url NAME`.
fn git_remote_ok(args: &[&str]) -> bool {
    match args.split_first() {
        None => true,
        // `-n` keeps it from contacting the remote (which would run `core.sshCommand`).
        Some((&"show", names)) => {
            names.contains(&"-n")
                && names.iter().any(|n| !n.starts_with('-'))
                && names.iter().all(|n| *n == "-n" || !n.starts_with('-'))
        }
        Some((&"get-url", rest)) => {
            let names = rest.iter().filter(|a| !a.starts_with('-')).count();
            names == 1
                && rest
                    .iter()
                    .all(|a| !a.starts_with('-') || ["--push", "--all"].contains(a))
        }
        Some(_) => args.iter().all(|a| *a == "-v" || *a == "--verbose"),
    }
}

/// `git config` with a reading action (`--get*`, `--list`, `-l`) and nothing that sets.
fn git_config_ok(args: &[&str]) -> bool {
    const ACTIONS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    ];
    const FLAGS: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-z",
        "--null",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
        "--fixed-value",
    ];
    const VALUED: &[&str] = &["-f", "--file", "--blob", "--type", "--default"];
    let mut action = false;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        let valued_inline = ["--file=", "--blob=", "--type=", "--default="];
        match arg {
            _ if ACTIONS.contains(&arg) => action = true,
            _ if VALUED.contains(&arg) => i += 1,
            _ if FLAGS.contains(&arg) || valued_inline.iter().any(|p| arg.starts_with(p)) => {}
            _ if arg.starts_with('-') => return false,
            _ => {}
        }
    }
    action
}

#[cfg(test)]
mod tests {
    use super::super::{accepts, rejects};

    #[test]
    fn git_reads() {
        accepts(&[
            "git rev-parse --show-toplevel",
            "git -C sub rev-parse HEAD",
            "git --no-pager rev-list --count HEAD",
            "git rev-list --format='%H %s' HEAD | head",
            "git ls-tree -r HEAD",
            "git cat-file -p HEAD",
            "git -C sub --no-pager cat-file -t HEAD:README.md",
            "git merge-base main HEAD",
            "git name-rev HEAD",
            "git count-objects -v",
        ]);
        // What loads the index or the work tree, diffs, or checks signatures can run programs
        // the repository's own configuration names, so it is never read-only.
        rejects(&[
            "git status",
            "git status -s",
            "git --no-pager log --oneline -n 5",
            "git -C sub diff --stat",
            "git -C sub --no-pager show HEAD:README.md",
            "git diff --no-ext-diff --no-textconv",
            "git blame -L 1,10 src/lib.rs",
            "git log --format='%H %s' | head",
            "git grep -n foo",
            "git ls-files | wc -l",
            "git check-ignore -v target",
            "git describe --dirty",
            "git shortlog -s",
            "git stash list",
            "git stash show -p stash@{0}",
            "git reflog",
            "git reflog show main",
            "git rev-list --format=%G? HEAD",
            "git rev-list --pretty=format:%GS HEAD",
            "git branch --format='%(signature)'",
            "git rev-list --show-signature HEAD",
        ]);
        rejects(&[
            "git",
            "git -c core.pager=sh log",
            "git -c alias.x=!sh x",
            "git --config-env=core.pager=X log",
            "git --exec-path=/tmp status",
            "git -p log",
            "git --git-dir=/tmp/x status",
            "git -C",
            "git log --output=/tmp/x",
            "git diff --output /tmp/x",
            "git diff --out=/tmp/x",
            "git diff --ext-diff",
            "git log -p --ext",
            "git diff --textconv",
            "git cat-file --textconv HEAD:f",
            "git cat-file --filters HEAD:f",
            "git grep -O foo",
            "git grep -nOvim foo",
            "git grep --open-files-in-pager=vim foo",
            "git push",
            "git commit -m x",
            "git checkout .",
            "git reset --hard",
            "git clean -fdx",
            "git fetch",
            "git stash",
            "git stash drop",
            "git stash pop",
            "git reflog expire --all",
            "git reflog delete HEAD@{0}",
            "git log *",
            "git help log",
            "git difftool",
        ]);
    }

    #[test]
    fn git_branch_and_tag() {
        accepts(&[
            "git branch",
            "git branch -a",
            "git branch -vv",
            "git branch -av",
            "git branch -r --list",
            "git branch --show-current",
            "git branch --list 'feat/*'",
            "git branch --contains HEAD~3",
            "git branch --merged main",
            "git branch --no-merged",
            "git branch --sort=-committerdate",
            "git tag",
            "git tag -l",
            "git tag --list 'v1.*'",
            "git tag -l -n3",
            "git tag --contains HEAD",
        ]);
        rejects(&[
            "git branch new-feature",
            "git branch new HEAD~1",
            "git branch -l new",
            "git branch -d x",
            "git branch -D x",
            "git branch -m a b",
            "git branch -M a b",
            "git branch -c a b",
            "git branch -C a b",
            "git branch --delete x",
            "git branch --del x",
            "git branch --move a b",
            "git branch --copy a b",
            "git branch -f x HEAD",
            "git branch --set-upstream-to=origin/x",
            "git branch -u origin/x",
            "git branch --unset-upstream",
            "git branch --edit-description",
            "git branch -ad x",
            "git tag v1",
            "git tag v1 HEAD~2",
            "git tag -d v1",
            "git tag -a v1 -m x",
            "git tag -s v1",
            "git tag -f v1",
            "git tag -m msg v1",
        ]);
    }

    #[test]
    fn git_remote_and_config() {
        accepts(&[
            "git remote",
            "git remote -v",
            "git remote show -n origin",
            "git remote get-url origin",
            "git remote get-url --push origin",
            "git config --get user.name",
            "git config --global --get-all remote.origin.fetch",
            "git config --get-regexp '^alias\\.'",
            "git config --list",
            "git config -l --show-origin",
            "git config --file .gitmodules --get-regexp path",
        ]);
        rejects(&[
            "git remote add x https://example.com/x",
            "git remote remove origin",
            "git remote set-url origin x",
            "git remote rename a b",
            "git remote prune origin",
            "git remote show",
            "git remote show origin",
            "git remote get-url",
            "git config user.name x",
            "git config --global core.pager sh",
            "git config --unset user.name",
            "git config --add a.b c",
            "git config --get a.b --add a.b c",
            "git config --replace-all a.b c",
            "git config -e",
            "git config --edit",
            "git config --remove-section a",
            "git config",
        ]);
    }
}
