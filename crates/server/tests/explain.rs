//! `workmate policy explain` agrees with the permission engine on every red-team case: the
//! corpus (crates/engine/tests/redteam/corpus.jsonl) states the engine's decision for each call,
//! and the engine's own test checks it; here the binary must print the same first line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::run;

const CORPUS: &str = include_str!("../../engine/tests/redteam/corpus.jsonl");

/// The fixture the corpus's paths refer to: a writable root with a folder, a file, and links
/// pointing inside, outside, and nowhere.
fn fixture(base: &Path) -> PathBuf {
    use std::os::unix::fs::symlink;
    let (root, outside) = (base.join("root"), base.join("outside"));
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("notes.md"), "a\nb\n").unwrap();
    symlink(&outside, root.join("escape")).unwrap();
    symlink(root.join("docs"), root.join("inner")).unwrap();
    symlink(root.join("missing/x"), root.join("loop")).unwrap();
    symlink(outside.join("missing/x"), root.join("dangle_out")).unwrap();
    root.canonicalize().unwrap()
}

/// The command line that explains one case.
fn explain_args(case: &Value, root: &Path) -> Vec<String> {
    let mut args = vec![
        "policy".to_owned(),
        "explain".to_owned(),
        "--mode".to_owned(),
        case["mode"].as_str().unwrap().to_owned(),
    ];
    let mut flag = |name: &str, value: String| {
        args.push(format!("--{name}"));
        args.push(value);
    };
    let strings = |key: &str| {
        case[key]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.as_str().unwrap().to_owned())
    };
    for entry in strings("allow") {
        flag("allow", entry);
    }
    for tool in strings("auto_allow") {
        flag("auto-allow", tool);
    }
    for o in case["overrides"].as_array().cloned().unwrap_or_default() {
        flag(
            "risk-override",
            format!(
                "{}={}",
                o["pattern"].as_str().unwrap(),
                o["risk"].as_str().unwrap()
            ),
        );
    }
    for tool in case["grants"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        flag("grant-tool", tool.as_str().unwrap().to_owned());
    }
    for command in case["grants"]["commands"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        flag("grant-command", command.as_str().unwrap().to_owned());
    }
    for (tool, targets) in case["rules"].as_object().cloned().unwrap_or_default() {
        for target in targets.as_array().unwrap() {
            flag("rule", format!("{tool}={}", target.as_str().unwrap()));
        }
    }
    if !case["metadata"].is_null() {
        flag("metadata", case["metadata"].to_string());
    }
    flag("root", root.display().to_string());
    if case["grants"]["readonly"].as_bool() == Some(true) {
        args.push("--readonly-session".into());
    }
    if case["automation"].as_bool() == Some(true) {
        args.push("--automation".into());
    }
    if case["shell_standing_choices"].as_bool() == Some(true) {
        args.push("--shell-standing-choices".into());
    }
    for host in strings("web_fetch_allow") {
        args.push("--web-fetch-allow".into());
        args.push(host);
    }
    args.push(case["tool"].as_str().unwrap().to_owned());
    args.push(
        case["args"]
            .to_string()
            .replace("$ROOT", &root.display().to_string()),
    );
    args
}

#[test]
fn explain_agrees_with_the_engine_on_every_red_team_case() {
    let base = tempfile::tempdir().unwrap();
    let root = fixture(base.path());
    let cases: Vec<Value> = CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cases.len() >= 300, "the corpus has {} cases", cases.len());
    let chunks: Vec<Vec<Value>> = cases
        .chunks(cases.len().div_ceil(4))
        .map(<[Value]>::to_vec)
        .collect();
    let mismatches: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let (root, dir) = (root.clone(), base.path().to_owned());
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|case| {
                            let args = explain_args(case, &root);
                            let args: Vec<&str> = args.iter().map(String::as_str).collect();
                            let output = run(&dir, &args, &[]);
                            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
                            let got = stdout.lines().next().unwrap_or_default().to_owned();
                            let expected = case["expect"].as_str().unwrap();
                            (got != expected || !output.status.success()).then(|| {
                                format!(
                                    "{}: expected {expected}, explain printed {stdout:?} {}",
                                    case["id"],
                                    String::from_utf8_lossy(&output.stderr)
                                )
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert!(
        mismatches.is_empty(),
        "{} disagreements:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn explain_prints_the_rule_and_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(
        dir.path(),
        &[
            "policy",
            "explain",
            "--allow",
            "git status",
            "run_shell",
            "--",
            "git",
            "push",
        ],
        &[],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout,
        "ask\nrule: requires approval\nrisk: exec\nchoices: once, always_command, deny\n"
    );
    let output = run(
        dir.path(),
        &[
            "policy",
            "explain",
            "--shell-standing-choices",
            "run_shell",
            "--",
            "git",
            "push",
        ],
        &[],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.ends_with("choices: once, always_tool, always_command, deny\n"),
        "{stdout}"
    );
    let output = run(
        dir.path(),
        &[
            "policy",
            "explain",
            "--json",
            "--readonly-session",
            "run_shell",
            "--",
            "git",
            "rev-parse",
            "HEAD",
        ],
        &[],
    );
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (json["decision"].as_str(), json["rule"].as_str()),
        (Some("allow"), Some("read-only command (session grant)"))
    );
    let output = run(
        dir.path(),
        &["policy", "explain", "write_file", "not json"],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: ARGS_JSON is not JSON"));
}
