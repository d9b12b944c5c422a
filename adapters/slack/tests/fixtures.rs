//! Loads the Slack platform vectors (produced by Slack's own SDK) at test time.
//!
//! Where they come from, first found wins: `WORKMATE_FIXTURES_DIR` when set (it must exist);
//! otherwise the shared `fixtures/platform-vectors` beside the workspace, which may hold more
//! cases than this repository; otherwise the copy in `tests/vectors/`, so a clone on its own still
//! checks every case it carries.

use std::path::PathBuf;

use serde_json::Value;

/// The vector directory.
pub(crate) fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WORKMATE_FIXTURES_DIR") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.is_dir(),
            "WORKMATE_FIXTURES_DIR names {}, which is not a directory",
            dir.display()
        );
        return dir;
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = manifest.join("../../../shared/fixtures/platform-vectors");
    if shared.is_dir() {
        shared
    } else {
        manifest.join("tests/vectors")
    }
}

/// The cases of one vector file; fails loudly when the file is missing or empty, so nothing
/// passes as "zero cases".
pub(crate) fn cases(file: &str) -> Vec<Value> {
    let path = dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the Slack test vectors {}: {e}", path.display()));
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
