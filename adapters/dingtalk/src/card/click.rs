//! The approval choice a card button click carries.
//!
//! A click arrives as `{"type":"actionCallback","outTrackId":…,"userId":…,"content":"<JSON
//! string>",…}`. DingTalk's documents and observed payloads disagree on where the button's params
//! sit inside `content`, so every documented place is read, in this order:
//! `cardPrivateData.params`, `params`, `userPrivateData.params`,
//! `actionData.cardPrivateData.params` (each's `action`), then the button's action id
//! (`cardPrivateData.actionIds[0]`, or a top-level `actionId`), which the template sets to the same
//! word.
//!
//! Invariant: a click yields a choice only when one of those places holds a known choice's wire
//! name; anything else (malformed JSON, an unknown word, a non-string) is `None`, never a guess
//! and never a panic. The choice says nothing about authority or whether the item still waits:
//! the caller checks both.

use serde_json::Value;
use workmate_protocol::ApprovalChoice;

/// Where the button's params may sit inside `content`, as JSON pointers to the params object.
const PARAMS_POINTERS: [&str; 4] = [
    "/cardPrivateData/params",
    "/params",
    "/userPrivateData/params",
    "/actionData/cardPrivateData/params",
];

/// Where the clicked button's action id may sit, as JSON pointers.
const ACTION_ID_POINTERS: [&str; 3] = [
    "/cardPrivateData/actionIds/0",
    "/actionData/cardPrivateData/actionIds/0",
    "/actionId",
];

/// The choice of a click, from the callback's `content` JSON string (see the module docs).
pub fn click_choice(content: &str) -> Option<ApprovalChoice> {
    let content: Value = serde_json::from_str(content).ok()?;
    choice_in(&content)
}

/// The choice of a click, from the whole callback JSON: its `content` (a JSON string, or an object
/// where a client already parsed it), else the callback's own top-level `actionId`.
pub fn callback_choice(callback: &Value) -> Option<ApprovalChoice> {
    let from_content = match callback.get("content") {
        Some(Value::String(text)) => click_choice(text),
        Some(object @ Value::Object(_)) => choice_in(object),
        _ => None,
    };
    from_content.or_else(|| callback.get("actionId").and_then(choice_of))
}

fn choice_in(content: &Value) -> Option<ApprovalChoice> {
    PARAMS_POINTERS
        .iter()
        .find_map(|pointer| content.pointer(pointer)?.get("action").and_then(choice_of))
        .or_else(|| {
            ACTION_ID_POINTERS
                .iter()
                .find_map(|pointer| content.pointer(pointer).and_then(choice_of))
        })
}

/// The string param `name` of the clicked button, from the whole callback JSON's `content`
/// (a JSON string or an object), read from the same places as its `action`; `None` when no
/// place holds a string under that name.
pub fn callback_param(callback: &Value, name: &str) -> Option<String> {
    let parsed;
    let content = match callback.get("content") {
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text).ok()?;
            &parsed
        }
        Some(object @ Value::Object(_)) => object,
        _ => return None,
    };
    PARAMS_POINTERS.iter().find_map(|pointer| {
        content
            .pointer(pointer)?
            .get(name)?
            .as_str()
            .map(str::to_owned)
    })
}

/// A known choice's wire name; surrounding whitespace is tolerated, case is not.
fn choice_of(value: &Value) -> Option<ApprovalChoice> {
    let word = value.as_str()?.trim();
    serde_json::from_value(Value::String(word.to_owned())).ok()
}
