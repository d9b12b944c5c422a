//! The Slack platform vectors (produced by Slack's own SDK), loaded at test time through the
//! kit's shared loader.

use serde_json::Value;
pub(crate) use workmate_adapter::testing::{bool_field, case_name as name, i64_field, str_field};

/// The cases of one vector file.
pub(crate) fn cases(file: &str) -> Vec<Value> {
    workmate_adapter::testing::vector_cases(env!("CARGO_MANIFEST_DIR"), file)
}
