//! A red-team corpus for the permission engine (spec §3): `redteam/corpus.jsonl` states, for each
//! hostile or borderline call, the decision the spec requires, and every case must get it.
//!
//! Invariant: no case whose expected decision is `ask` or `deny` may come out `allow` — nothing
//! consequential runs where a person should have been asked.
#![cfg(unix)]

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use workmate_engine::permissions::{
    Decision, PermissionConfig, PermissionEngine, PolicyContext, RiskOverride, SessionGrants,
    TenantPolicy,
};
use workmate_protocol::PermissionMode;
use workmate_tools::{BuiltinOptions, Root, ToolMetadata, builtin_registry};

/// The corpus, next to this file.
const CORPUS: &str = "tests/redteam/corpus.jsonl";

/// The categories (id prefixes) the corpus must cover, each with at least `MIN_PER_CATEGORY` cases.
const CATEGORIES: &[&str] = &[
    "chain",     // operator chaining after an allowlisted prefix
    "quote",     // shlex quoting tricks
    "unicode",   // look-alikes, zero-width and bidi characters
    "expand",    // variables, globs, tilde
    "allowlist", // prefix semantics and admin-broad entries
    "path",      // write scoping: traversal, symlinks, NUL, home
    "long",      // 10–20 KB inputs
    "readonly",  // the session read-only grant classifier
    "matrix",    // risk class × mode
    "grant",     // session grants
    "rule",      // standing rules
    "override",  // tenant risk overrides
];
const MIN_CASES: usize = 300;
const MIN_PER_CATEGORY: usize = 20;

/// What the engine decided or should decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// Session grants as the corpus writes them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct Grants {
    pub(crate) tools: Vec<String>,
    pub(crate) commands: Vec<String>,
    pub(crate) readonly: bool,
}

/// One corpus line.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    pub(crate) id: String,
    pub(crate) mode: PermissionMode,
    /// The tenant's shell allowlist.
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    #[serde(default)]
    pub(crate) grants: Grants,
    /// Standing rules: tool → exact targets.
    #[serde(default)]
    pub(crate) rules: BTreeMap<String, BTreeSet<String>>,
    #[serde(default)]
    pub(crate) automation: bool,
    #[serde(default)]
    pub(crate) overrides: Vec<RiskOverride>,
    #[serde(default)]
    pub(crate) auto_allow: Vec<String>,
    /// The tenant setting `shell_standing_choices`.
    #[serde(default)]
    pub(crate) shell_standing_choices: bool,
    /// The tenant setting `web_fetch_allow`.
    #[serde(default)]
    pub(crate) web_fetch_allow: Vec<String>,
    /// The choices an `ask` must offer, when the case says.
    #[serde(default)]
    pub(crate) choices: Option<Vec<String>>,
    /// Metadata of a tool that is not built in (built-ins come from the registry).
    #[serde(default)]
    pub(crate) metadata: Option<ToolMetadata>,
    pub(crate) tool: String,
    pub(crate) args: serde_json::Value,
    pub(crate) expect: Verdict,
    pub(crate) why: String,
}

impl Case {
    /// The id's prefix: `chain-007` → `chain`.
    pub(crate) fn category(&self) -> &str {
        self.id
            .rsplit_once('-')
            .map_or(self.id.as_str(), |(prefix, _)| prefix)
    }

    /// The tenant policy of this case.
    pub(crate) fn config(&self) -> PermissionConfig {
        PermissionConfig {
            allowed_commands: self.allow.clone(),
            auto_allow: self.auto_allow.clone(),
            risk_overrides: self.overrides.clone(),
        }
    }

    /// The session context, with `$ROOT` replaced by the fixture root.
    pub(crate) fn context(&self, root: &Path) -> PolicyContext {
        PolicyContext {
            mode: self.mode,
            roots: vec![Root {
                path: root.to_path_buf(),
                writable: true,
            }],
            grants: SessionGrants {
                tools: self.grants.tools.iter().cloned().collect(),
                commands: self
                    .grants
                    .commands
                    .iter()
                    .map(|c| substitute(c, root))
                    .collect(),
                readonly: self.grants.readonly,
            },
            standing_rules: self
                .rules
                .iter()
                .map(|(tool, targets)| {
                    (
                        tool.clone(),
                        targets.iter().map(|t| substitute(t, root)).collect(),
                    )
                })
                .collect(),
            automation: self.automation,
        }
    }

    /// The call's arguments, with `$ROOT` replaced by the fixture root.
    pub(crate) fn arguments(&self, root: &Path) -> serde_json::Value {
        substitute_json(&self.args, root)
    }

    /// The tool's metadata: the case's own, else the built-in registry's, else none.
    pub(crate) fn tool_metadata(&self) -> Option<ToolMetadata> {
        self.metadata
            .clone()
            .or_else(|| builtin_registry(&BuiltinOptions::default()).metadata(&self.tool))
    }

    /// What the engine decides for this case.
    pub(crate) fn evaluate(&self, root: &Path) -> Verdict {
        self.evaluate_with_choices(root).0
    }

    /// What the engine decides for this case, and the choices an `ask` offers.
    pub(crate) fn evaluate_with_choices(&self, root: &Path) -> (Verdict, Vec<String>) {
        let engine = PermissionEngine::new(self.config()).with_policy(TenantPolicy {
            shell_standing_choices: self.shell_standing_choices,
            web_fetch_allow: self.web_fetch_allow.clone(),
            network_tools: Vec::new(),
        });
        let decision = engine.evaluate(
            &self.context(root),
            &self.tool,
            &self.arguments(root),
            self.tool_metadata().as_ref(),
        );
        let choices = match &decision {
            Decision::Ask { choices, .. } => {
                choices.iter().map(|c| c.as_str().to_owned()).collect()
            }
            _ => Vec::new(),
        };
        let verdict = match decision.verdict() {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            _ => Verdict::Deny,
        };
        (verdict, choices)
    }
}

fn substitute(text: &str, root: &Path) -> String {
    text.replace("$ROOT", &root.to_string_lossy())
}

fn substitute_json(value: &serde_json::Value, root: &Path) -> serde_json::Value {
    match value {
        serde_json::Value::String(s) => serde_json::Value::String(substitute(s, root)),
        serde_json::Value::Array(items) => items.iter().map(|v| substitute_json(v, root)).collect(),
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), substitute_json(v, root)))
            .collect(),
        other => other.clone(),
    }
}

/// Every case of the corpus, in file order. Panics on a malformed line, naming it.
pub(crate) fn load_corpus() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{CORPUS}:{}: malformed case: {e}", n + 1))
        })
        .collect()
}

/// A temporary fixture directory, removed on drop.
#[derive(Debug)]
pub(crate) struct Fixture {
    base: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// A fresh fixture: `base/root` (returned, canonical, the writable root) holding `docs/`,
/// `notes.md`, `escape` (→ `base/outside`, a directory outside the root), `inner` (→ `root/docs`),
/// `loop` (dangling, → `root/missing/x`) and `dangle_out` (dangling, → `base/outside/missing/x`).
pub(crate) fn fixture_root() -> (Fixture, PathBuf) {
    use std::os::unix::fs::symlink;

    let base = std::env::temp_dir().join(format!("workmate-redteam-{}", uuid::Uuid::new_v4()));
    let fixture = Fixture { base: base.clone() };
    std::fs::create_dir_all(base.join("root/docs")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let base = base.canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::write(root.join("notes.md"), "a\nb\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "outside\n").unwrap();
    symlink(&outside, root.join("escape")).unwrap();
    symlink(root.join("docs"), root.join("inner")).unwrap();
    symlink(root.join("missing/x"), root.join("loop")).unwrap();
    symlink(outside.join("missing/x"), root.join("dangle_out")).unwrap();
    assert_eq!(root.join("escape").canonicalize().unwrap(), outside);
    assert!(
        root.join("loop").symlink_metadata().is_ok() && root.join("loop").canonicalize().is_err()
    );
    (fixture, root)
}

/// Every case evaluated once: `(case, what the engine decided)`.
fn evaluated() -> Vec<(Case, Verdict)> {
    let (_fixture, root) = fixture_root();
    load_corpus()
        .into_iter()
        .map(|case| {
            let got = case.evaluate(&root);
            (case, got)
        })
        .collect()
}

fn describe(case: &Case, got: Verdict) -> String {
    format!(
        "  {}: expected {}, got {} ({} {} in {}) — {}",
        case.id,
        case.expect.as_str(),
        got.as_str(),
        case.tool,
        shorten(&case.args.to_string()),
        case.mode.as_str(),
        case.why
    )
}

fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let head: String = text.chars().take(MAX).collect();
    format!("{head}… ({} chars)", text.chars().count())
}

#[test]
fn corpus_is_well_formed() {
    let cases = load_corpus();
    assert!(
        cases.len() >= MIN_CASES,
        "only {} cases; at least {MIN_CASES} are required",
        cases.len()
    );
    let mut seen = HashSet::new();
    let duplicates: Vec<_> = cases
        .iter()
        .filter(|c| !seen.insert(c.id.as_str()))
        .map(|c| c.id.as_str())
        .collect();
    assert!(duplicates.is_empty(), "duplicate ids: {duplicates:?}");
    let unknown: Vec<_> = cases
        .iter()
        .filter(|c| !CATEGORIES.contains(&c.category()))
        .map(|c| c.id.as_str())
        .collect();
    assert!(
        unknown.is_empty(),
        "ids outside the known categories: {unknown:?}"
    );
    for category in CATEGORIES {
        let count = cases.iter().filter(|c| c.category() == *category).count();
        assert!(
            count >= MIN_PER_CATEGORY,
            "category {category} has {count} cases; at least {MIN_PER_CATEGORY} are required"
        );
    }
    let unexplained: Vec<_> = cases
        .iter()
        .filter(|c| c.why.trim().is_empty())
        .map(|c| c.id.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "cases without a reason: {unexplained:?}"
    );
    let unknown_tools: Vec<_> = cases
        .iter()
        .filter(|c| c.tool.trim().is_empty())
        .map(|c| c.id.as_str())
        .collect();
    assert!(
        unknown_tools.is_empty(),
        "cases without a tool: {unknown_tools:?}"
    );
}

#[test]
fn every_case_gets_the_decision_the_spec_requires() {
    let results = evaluated();
    let mut report = String::new();
    let mut wrong = 0;
    for (case, got) in &results {
        if *got != case.expect {
            wrong += 1;
            let _ = writeln!(report, "{}", describe(case, *got));
        }
    }
    assert!(
        wrong == 0,
        "{wrong} of {} red-team cases got the wrong decision:\n{report}",
        results.len()
    );
}

#[test]
fn asks_offer_the_choices_the_case_names() {
    let (_fixture, root) = fixture_root();
    let mut report = String::new();
    for case in load_corpus() {
        let Some(expected) = &case.choices else {
            continue;
        };
        let (_, got) = case.evaluate_with_choices(&root);
        if &got != expected {
            let _ = writeln!(report, "  {}: expected {expected:?}, got {got:?}", case.id);
        }
    }
    assert!(report.is_empty(), "wrong choices:\n{report}");
}

#[test]
fn nothing_is_auto_allowed_where_a_human_should_be_asked() {
    let results = evaluated();
    let mut report = String::new();
    let mut leaks = 0;
    for (case, got) in &results {
        if case.expect != Verdict::Allow && *got == Verdict::Allow {
            leaks += 1;
            let _ = writeln!(report, "{}", describe(case, *got));
        }
    }
    assert!(
        leaks == 0,
        "{leaks} call(s) AUTO-ALLOWED where a human should be asked (or the call refused):\n{report}"
    );
}
