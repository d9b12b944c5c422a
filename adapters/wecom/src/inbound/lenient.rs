//! Lenient reading of JSON fields whose type or casing WeCom does not pin down: ids that may be
//! numbers, timestamps that may be strings, keys in `snake_case` or `PascalCase`, a list that may
//! be one value.
//!
//! Invariant: these readers never fail on a value of an unexpected type; they read it as absent.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::Selection;

/// A string, or a number written as one; anything else (null, absent) is empty.
pub(super) fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(opt_string(deserializer)?.unwrap_or_default())
}

/// A non-empty string, or a number written as one; anything else is `None`.
pub(super) fn opt_string<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(as_text(&Value::deserialize(deserializer)?))
}

/// An integer, or a string holding one; anything else is `None`.
pub(super) fn opt_i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

/// A value as text: a non-empty string, or a number.
pub(super) fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The first of `keys` that `object` has (not null).
pub(super) fn field<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .filter_map(|key| object.get(key))
        .find(|v| !v.is_null())
}

/// The first of `keys` that `object` has, as text.
pub(super) fn text(object: &Value, keys: &[&str]) -> Option<String> {
    field(object, keys).and_then(as_text)
}

/// A value that may be a list or a single item, as a list.
fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        Value::Null => &[],
        single => std::slice::from_ref(single),
    }
}

/// The choices on a card, from `selected_items` in any of the shapes seen:
/// `{"selected_item": [{"question_key", "option_ids": {"option_id": [..]}}]}`, the same with
/// `PascalCase` keys, or the list of items directly.
pub(super) fn selections(selected_items: &Value) -> Vec<Selection> {
    let list = field(selected_items, &["selected_item", "SelectedItem"]).unwrap_or(selected_items);
    items(list)
        .iter()
        .filter(|item| item.is_object())
        .map(|item| {
            let options = field(item, &["option_ids", "OptionIds"]).unwrap_or(&Value::Null);
            let options = field(options, &["option_id", "OptionId"]).unwrap_or(options);
            Selection {
                question_key: text(item, &["question_key", "QuestionKey"]).unwrap_or_default(),
                option_ids: items(options).iter().filter_map(as_text).collect(),
            }
        })
        .collect()
}
