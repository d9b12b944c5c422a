//! Buttons of a `button_interaction` card: `button_list[{text, style, key}]`.
//!
//! Invariants: a button's `key` is its [`ButtonAction`] as compact JSON, which
//! [`super::decode_key`] reads back; keys are at most [`MAX_KEY_BYTES`] and unique within the
//! card; a card carries at most [`MAX_BUTTONS`]. A button that cannot be carried (its key too
//! long, the same as an earlier one's, or past the cap) is counted, so the card can say how many
//! were left out and how to answer instead.

use std::collections::HashSet;

use serde_json::{Value, json};
use workmate_cards::{Button, ButtonStyle};

use super::width::cut;
use workmate_cards::md::one_line;

/// Buttons on one card (`button_list` holds at most six).
pub const MAX_BUTTONS: usize = 6;
/// Columns of a button's text: WeCom suggests at most 10 字 (see [`super::columns`]). Longer
/// labels are cut at a word's end with `…`.
pub const MAX_BUTTON_TEXT_COLUMNS: usize = 20;
/// Bytes of a button's `key`, which comes back as the click's `event_key` (`EventKey` for the
/// self-built app).
pub const MAX_KEY_BYTES: usize = 1024;

/// The `style` WeCom draws a button with. WeCom documents the four styles only as a picture:
/// 1 is its default and the filled, prominent one; 3 is read here as the warning (red) one and 2
/// as the plain one; 4 is not used.
pub(crate) fn style_code(style: ButtonStyle) -> u8 {
    match style {
        ButtonStyle::Primary => 1,
        ButtonStyle::Default => 2,
        ButtonStyle::Danger => 3,
    }
}

/// The `button_list` for `buttons`, and how many of them could not be carried.
pub(crate) fn button_list(buttons: &[&Button]) -> (Vec<Value>, usize) {
    let mut list = Vec::new();
    let mut keys = HashSet::new();
    let mut left_out = 0;
    for button in buttons {
        let key = match serde_json::to_string(&button.action) {
            Ok(key) if key.len() <= MAX_KEY_BYTES => key,
            _ => {
                left_out += 1;
                continue;
            }
        };
        if list.len() == MAX_BUTTONS || !keys.insert(key.clone()) {
            left_out += 1;
            continue;
        }
        let text = match one_line(&button.label) {
            label if label.is_empty() => "…".to_owned(),
            label => cut(&label, MAX_BUTTON_TEXT_COLUMNS),
        };
        list.push(json!({
            "text": text,
            "style": style_code(button.style),
            "key": key,
        }));
    }
    (list, left_out)
}

/// What a card says when some of its buttons were not carried.
pub(crate) fn left_out_note(left_out: usize) -> String {
    let buttons = if left_out == 1 { "button" } else { "buttons" };
    format!("… {left_out} more {buttons} not shown; reply in the thread instead.")
}
