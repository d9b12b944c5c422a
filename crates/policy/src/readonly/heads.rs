//! Argument checks for the programs the read-only classifier accepts by name: the few options of
//! otherwise harmless programs that write or run something, and the conditional heads `command`,
//! `find` and the awk family.
//!
//! Invariant: each check refuses every option it does not know to be harmless where the program
//! has a dangerous one, and it scans all arguments (GNU programs take options after operands).

/// Argument checks for the safe heads that still have an option that writes or runs something.
pub(super) fn plain_ok(head: &str, args: &[&str]) -> bool {
    match head {
        "sort" => !args.iter().any(|a| {
            short_has(a, 'o') || long_opt(a, "--output") || long_opt(a, "--compress-program")
        }),
        // A second operand is the output file.
        "uniq" => operands(args, &["-f", "-s", "-w"]) <= 1,
        "xxd" => {
            let values = [
                "-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-len", "-seek", "-name",
            ];
            operands(args, &values) <= 1
        }
        "rg" => !args
            .iter()
            .any(|a| long_opt(a, "--pre") || long_opt(a, "--hostname-bin")),
        "ugrep" => !args.iter().any(|a| {
            a.starts_with("---")
                || short_has(a, 'Q')
                || [
                    "--filter",
                    "--save-config",
                    "--config",
                    "--pager",
                    "--view",
                    "--query",
                ]
                .iter()
                .any(|name| long_opt(a, name))
        }),
        "date" => date_ok(args),
        "file" => !args
            .iter()
            .any(|a| short_has(a, 'C') || long_opt(a, "--compile")),
        "actionlint" => !args.iter().any(|a| {
            a.starts_with('-') && {
                let name = a.trim_start_matches('-');
                name.starts_with("shellcheck") || name.starts_with("pyflakes")
            }
        }),
        _ => true,
    }
}

/// Whether `arg` is the long option `name` or an abbreviation getopt would expand to it.
pub(super) fn long_opt(arg: &str, name: &str) -> bool {
    let key = arg.split_once('=').map_or(arg, |(key, _)| key);
    key.len() > 2 && key.starts_with("--") && name.starts_with(key)
}

/// Whether `arg` is a cluster of short options (`-abc`) that contains `letter`.
pub(super) fn short_has(arg: &str, letter: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|cluster| !cluster.starts_with('-') && cluster.contains(letter))
}

/// How many operands (non-options) `args` holds, skipping the value after each of `valued`.
fn operands(args: &[&str], valued: &[&str]) -> usize {
    let mut count = 0;
    let mut options_done = false;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            count += 1;
        } else if arg == "--" {
            options_done = true;
        } else if valued.contains(&arg) {
            i += 1;
        }
    }
    count
}

/// `date` prints; it sets the clock with `-s`/`--set` or an operand that is not a `+FORMAT`.
fn date_ok(args: &[&str]) -> bool {
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        if ["-d", "-f", "-r", "--date", "--file", "--reference"].contains(&arg) {
            i += 1;
        } else if arg.starts_with("--") {
            if long_opt(arg, "--set") {
                return false;
            }
        } else if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) {
            for c in cluster.chars() {
                match c {
                    's' => return false,
                    // The rest of the cluster is this option's value.
                    'd' | 'f' | 'r' | 'I' => break,
                    _ => {}
                }
            }
        } else if !arg.starts_with('+') {
            return false;
        }
    }
    true
}

/// `command -v NAME…` or `command -V NAME…` only describe commands.
pub(super) fn command_ok(args: &[&str]) -> bool {
    match args.split_first() {
        Some((&flag, names)) => {
            (flag == "-v" || flag == "-V") && names.iter().all(|n| !n.starts_with('-'))
        }
        None => false,
    }
}

/// `find` without the primaries that delete, run or write files.
pub(super) fn find_ok(args: &[&str]) -> bool {
    const WRITES: &[&str] = &["-delete", "-exec", "-ok", "-fprint", "-fls"];
    !args.iter().any(|a| WRITES.iter().any(|w| a.starts_with(w)))
}

/// The awk family without output redirection, pipes, `system`, `getline`, indirect calls or
/// extension loading (`@`), and only options that neither load code nor write files.
pub(super) fn awk_ok(args: &[&str]) -> bool {
    if args
        .iter()
        .any(|a| a.contains(['>', '|', '@']) || a.contains("system") || a.contains("getline"))
    {
        return false;
    }
    const FLAGS: &[&str] = &[
        "--posix",
        "--traditional",
        "--compat",
        "--sandbox",
        "--re-interval",
        "--characters-as-bytes",
        "--bignum",
        "--use-lc-numeric",
        "--non-decimal-data",
        "--version",
        "--help",
    ];
    const VALUED: &[&str] = &[
        "-F",
        "-v",
        "-e",
        "--source",
        "--field-separator",
        "--assign",
    ];
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            break;
        }
        if arg == "-" || !arg.starts_with('-') || FLAGS.contains(&arg) {
            continue;
        }
        if VALUED.contains(&arg) {
            i += 1;
            continue;
        }
        let attached = [
            "-F",
            "-v",
            "-e",
            "--source=",
            "--field-separator=",
            "--assign=",
        ];
        if attached.iter().any(|p| arg.starts_with(p)) {
            continue;
        }
        let harmless = |c: char| "bcCMNnPrSstVh".contains(c);
        if !arg.starts_with("--") && arg.chars().skip(1).all(harmless) {
            continue;
        }
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::{accepts, rejects};

    #[test]
    fn conditional_env_and_command() {
        accepts(&["env", "command -v ls", "command -V git rg"]);
        rejects(&[
            "env ls",
            "env -i sh",
            "env FOO=1 rm x",
            "command ls",
            "command -p ls",
            "command",
        ]);
    }

    #[test]
    fn awk() {
        accepts(&[
            "awk '{print $1}' f",
            "awk -F: '{print $1}' /etc/passwd",
            "awk -F , -v n=2 'NR == 1 {print $n}' f",
            "gawk 'END{print NR}' f",
            "mawk 1 f",
            "nawk '/x/' f",
            "awk -- '{print}' f",
        ]);
        rejects(&[
            "awk 'BEGIN{system(\"id\")}'",
            "awk '{print > \"out\"}' f",
            "awk '{print | \"sh\"}' f",
            "awk 'BEGIN{\"id\" | getline x}'",
            "awk 'BEGIN{getline x < \"/etc/shadow\"}'",
            "awk 'BEGIN{f=\"sys\" \"tem\"; @f(\"id\")}'",
            "gawk '@load \"x\"'",
            "awk -f prog.awk f",
            "gawk -i inc '1' f",
            "gawk -l ext '1' f",
            "gawk -E prog f",
            "mawk -W exec prog",
            "gawk --dump-variables=out 1 f",
            "gawk -d 1 f",
            "gawk -o 1 f",
            "gawk --profile=out 1 f",
            "gawk --load=x 1 f",
            "awk '{print}' *",
            "awk 'NR > 1' f",
        ]);
    }

    #[test]
    fn find() {
        accepts(&[
            "find . -name '*.rs'",
            "find src -type f -newer Cargo.toml -print",
            "find . -maxdepth 2 -printf '%p\\n'",
            "find . -ls",
        ]);
        rejects(&[
            "find . -delete",
            "find . -name x -delete",
            "find . -exec rm {} \\;",
            "find . -exec rm {} +",
            "find . -execdir rm {} +",
            "find . -ok rm {} \\;",
            "find . -okdir rm {} \\;",
            "find . -fprint out",
            "find . -fprint0 out",
            "find . -fls out",
            "find . -fprintf out %p",
            "find . -name *.rs",
        ]);
    }

    #[test]
    fn safe_heads_with_writing_options() {
        accepts(&[
            "sort f",
            "sort -rn -k2 f",
            "sort -t, -k1,1 f",
            "uniq f",
            "uniq -c",
            "xxd f",
            "xxd -l 64 f",
            "rg foo",
            "rg --pre-glob '*.gz' foo",
            "ugrep -n foo",
            "date",
            "date -u",
            "file f",
            "actionlint",
            "actionlint .github/workflows/ci.yml",
        ]);
        rejects(&[
            "sort -o out f",
            "sort -uo out f",
            "sort --output=out f",
            "sort --out out f",
            "sort --compress-program=sh f",
            "sort *",
            "uniq in out",
            "xxd in out",
            "xxd -r dump out",
            "rg --pre sh foo",
            "rg --pre=./x foo",
            "rg --hostname-bin=./x foo",
            "rg foo *",
            "ugrep --filter='*:sh' foo",
            "ugrep --save-config",
            "ugrep --config=x foo",
            "ugrep ---x foo",
            "ugrep -Q",
            "ugrep --pager=sh foo",
            "date -s 2020-01-01",
            "date --set=2020-01-01",
            "date 010100002020",
            "file -C -m magic",
            "file --compile",
            "actionlint -shellcheck=./x",
            "actionlint --pyflakes ./x",
        ]);
    }

    #[test]
    fn option_helpers() {
        use super::{long_opt, short_has};
        assert!(long_opt("--output", "--output"));
        assert!(long_opt("--out=x", "--output"));
        assert!(long_opt("--o", "--output"));
        assert!(!long_opt("--", "--output"));
        assert!(!long_opt("--outputs", "--output"));
        assert!(!long_opt("-o", "--output"));
        assert!(short_has("-uo", 'o'));
        assert!(!short_has("--o", 'o'));
        assert!(!short_has("o", 'o'));
    }
}
