//! Loads the shared platform vectors (produced by Slack's own SDK) at test time.

use std::path::PathBuf;

use serde_json::Value;

/// The vector directory: `WORKMATE_FIXTURES_DIR` when set, otherwise
/// `shared/fixtures/platform-vectors` beside the workspace root (three levels up from this crate).
pub(crate) fn dir() -> PathBuf {
    match std::env::var_os("WORKMATE_FIXTURES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/platform-vectors"),
    }
}

/// The cases of one vector file; fails loudly when the fixtures are not where expected, so a
/// missing checkout never passes as "zero cases".
pub(crate) fn cases(file: &str) -> Vec<Value> {
    let dir = dir();
    assert!(
        dir.is_dir(),
        "Slack test vectors not found: expected the directory {} (the shared fixtures, \
         `shared/fixtures/platform-vectors/` next to the workspace root; set \
         WORKMATE_FIXTURES_DIR to point elsewhere)",
        dir.display()
    );
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a JSON array of cases: {e}", path.display()));
    assert!(!cases.is_empty(), "{} has no cases", path.display());
    cases
}

pub(crate) fn str_field<'a>(case: &'a Value, field: &str) -> &'a str {
    case[field]
        .as_str()
        .unwrap_or_else(|| panic!("case {} has no string `{field}`", name(case)))
}

pub(crate) fn i64_field(case: &Value, field: &str) -> i64 {
    case[field]
        .as_i64()
        .unwrap_or_else(|| panic!("case {} has no integer `{field}`", name(case)))
}

pub(crate) fn bool_field(case: &Value, field: &str) -> bool {
    case[field]
        .as_bool()
        .unwrap_or_else(|| panic!("case {} has no boolean `{field}`", name(case)))
}

pub(crate) fn name(case: &Value) -> &str {
    case["name"].as_str().unwrap_or("<unnamed>")
}
