//! Test support shared by the platform adapters: the platforms' own test vectors.
//!
//! Where the vectors come from, first found wins: `WORKMATE_FIXTURES_DIR` when set (it must
//! exist); otherwise the shared `fixtures/platform-vectors` beside the workspace, which may hold
//! more cases than this repository; otherwise the adapter's own copy in `tests/vectors/`, so a
//! clone on its own still checks every case it carries.
#![allow(
    clippy::panic,
    reason = "test support: a missing vector file must fail the test loudly"
)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The vector directory of the adapter whose manifest directory is `manifest_dir`.
pub fn vector_dir(manifest_dir: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("WORKMATE_FIXTURES_DIR") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.is_dir(),
            "WORKMATE_FIXTURES_DIR names {}, which is not a directory",
            dir.display()
        );
        return dir;
    }
    let manifest = Path::new(manifest_dir);
    let shared = manifest.join("../../../shared/fixtures/platform-vectors");
    if shared.is_dir() {
        shared
    } else {
        manifest.join("tests/vectors")
    }
}

/// The cases of one vector file; fails loudly when the file is missing or empty, so nothing
/// passes as "zero cases".
pub fn vector_cases(manifest_dir: &str, file: &str) -> Vec<Value> {
    let path = vector_dir(manifest_dir).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the test vectors {}: {e}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a JSON array of cases: {e}", path.display()));
    assert!(!cases.is_empty(), "{} has no cases", path.display());
    cases
}

/// A case's string field.
pub fn str_field<'a>(case: &'a Value, field: &str) -> &'a str {
    case[field]
        .as_str()
        .unwrap_or_else(|| panic!("case {} has no string `{field}`", case_name(case)))
}

/// A case's integer field.
pub fn i64_field(case: &Value, field: &str) -> i64 {
    case[field]
        .as_i64()
        .unwrap_or_else(|| panic!("case {} has no integer `{field}`", case_name(case)))
}

/// A case's boolean field.
pub fn bool_field(case: &Value, field: &str) -> bool {
    case[field]
        .as_bool()
        .unwrap_or_else(|| panic!("case {} has no boolean `{field}`", case_name(case)))
}

/// A case's name, for messages.
pub fn case_name(case: &Value) -> &str {
    case["name"].as_str().unwrap_or("<unnamed>")
}
