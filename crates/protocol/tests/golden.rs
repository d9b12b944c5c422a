//! Golden files: compare a generated text with its committed copy, or rewrite the copy when
//! blessing. Also small readers of the generated JSON Schemas.

use std::path::PathBuf;

use serde_json::Value;

/// The environment variable that turns drift checks into rewrites.
const BLESS_VAR: &str = "WORKMATE_BLESS";

fn contract_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/contract")
}

/// Fails when `docs/contract/<file>` differs from `fresh`; with `WORKMATE_BLESS=1`, rewrites it.
pub(crate) fn check(file: &str, fresh: &str) {
    let path = contract_dir().join(file);
    if std::env::var(BLESS_VAR).is_ok_and(|v| v == "1") {
        std::fs::write(&path, fresh).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == fresh {
        return;
    }
    let first_difference = committed
        .lines()
        .zip(fresh.lines())
        .position(|(old, new)| old != new)
        .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
    panic!(
        "docs/contract/{file} is out of date with the protocol types (first difference at line {}).\n\
         If the change is intended, regenerate it with:\n    \
         WORKMATE_BLESS=1 cargo test -p workmate-protocol\n\
         and commit the result (a contract change also needs an ADR in docs/adr/).",
        first_difference + 1
    );
}

/// Pretty JSON, two-space indented, with a trailing newline.
pub(crate) fn pretty(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap();
    text.push('\n');
    text
}

/// The variants of a tagged enum's schema (`oneOf` entries), keyed by their `const` tag.
pub(crate) fn variants<'a>(one_of: &'a Value, tag: &str) -> Vec<(&'a str, &'a Value)> {
    one_of
        .as_array()
        .unwrap_or_else(|| panic!("not a oneOf list: {one_of}"))
        .iter()
        .map(|variant| {
            let name = variant["properties"][tag]["const"]
                .as_str()
                .unwrap_or_else(|| panic!("variant without a `{tag}` const: {variant}"));
            (name, variant)
        })
        .collect()
}

/// The variants of `EventKind` in the event schema.
pub(crate) fn event_kind_variants(schema: &Value) -> Vec<(&str, &Value)> {
    variants(&schema["$defs"]["EventKind"]["oneOf"], "type")
}

/// The variants of `Command` in the command schema.
pub(crate) fn command_variants(schema: &Value) -> Vec<(&str, &Value)> {
    variants(&schema["oneOf"], "type")
}

/// Fails unless `object` has every `required` key of `schema` and no key it does not declare.
pub(crate) fn assert_shape(what: &str, schema: &Value, object: &Value) {
    let keys: Vec<&str> = object
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {object}"))
        .keys()
        .map(String::as_str)
        .collect();
    let declared = schema["properties"].as_object().unwrap();
    for key in &keys {
        assert!(
            declared.contains_key(*key),
            "{what}: undeclared field `{key}`"
        );
    }
    for required in schema["required"].as_array().unwrap() {
        let required = required.as_str().unwrap();
        assert!(
            keys.contains(&required),
            "{what}: missing required field `{required}`"
        );
    }
}
