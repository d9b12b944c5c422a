//! Buttons: Card JSON 2.0 buttons in a `column_set`, one column each, wrapping as needed.
//!
//! Invariants: a button's callback value is its [`ButtonAction`] as a JSON object (which
//! [`super::decode_action`] reads back) of at most [`MAX_BUTTON_VALUE_BYTES`]; a card carries at
//! most [`MAX_BUTTONS`]. A button that cannot be carried (its value too long, or past the cap) is
//! not silently lost: a note under its row says how many were left out and how to answer
//! instead. Card 2.0 has no `action` container, so none is ever written.

use serde_json::{Value, json};
use workmate_cards::text::truncate;
use workmate_cards::{Button, ButtonAction, ButtonStyle};

use super::text::{json_size, one_line, plural};

/// Buttons on one card: well above any prompt workmate shows (an approval offers at most six
/// choices), and few enough that their nodes and values leave most of the card for text.
pub const MAX_BUTTONS: usize = 20;
/// Characters of a button's label; longer ones end in `…`.
pub const MAX_BUTTON_LABEL_CHARS: usize = 40;
/// Bytes of a button's value as JSON. A Stop or approval value takes about 120 with UUIDv7 ids;
/// what is left is for an answer's text.
pub const MAX_BUTTON_VALUE_BYTES: usize = 400;

/// One row of buttons, without element ids.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) buttons: Vec<Value>,
}

impl Row {
    /// Card elements it takes: the column set, and a column and a button per button.
    pub(crate) fn nodes(&self) -> usize {
        1 + 2 * self.buttons.len()
    }

    /// The `column_set`; ids are assigned when the card is put together.
    pub(crate) fn element(&self) -> Value {
        let columns: Vec<Value> = self
            .buttons
            .iter()
            .map(|button| {
                json!({
                    "tag": "column",
                    "width": "auto",
                    "elements": [button],
                })
            })
            .collect();
        json!({
            "tag": "column_set",
            "flex_mode": "flow",
            "horizontal_spacing": "8px",
            "columns": columns,
        })
    }
}

/// The row for `buttons`, taking from `room` (buttons the card may still carry), and how many
/// of them could not be carried.
pub(crate) fn row(buttons: &[Button], room: &mut usize) -> (Option<Row>, usize) {
    let mut kept = Vec::new();
    let mut left_out = 0;
    for button in buttons {
        match element(button) {
            Some(element) if *room > 0 => {
                *room -= 1;
                kept.push(element);
            }
            _ => left_out += 1,
        }
    }
    let row = (!kept.is_empty()).then_some(Row { buttons: kept });
    (row, left_out)
}

/// What a card says under a row whose buttons were not all carried.
pub(crate) fn left_out_note(left_out: usize) -> String {
    format!(
        "… {} not shown; reply in the thread instead.",
        plural(left_out, "more button")
    )
}

/// The button, or `None` when its value would be too long.
fn element(button: &Button) -> Option<Value> {
    let value = serde_json::to_value(&button.action).ok()?;
    if json_size(&value) > MAX_BUTTON_VALUE_BYTES {
        return None;
    }
    let label = match one_line(&button.label) {
        label if label.is_empty() => "…".to_owned(),
        label => truncate(&label, MAX_BUTTON_LABEL_CHARS),
    };
    let kind = match button.style {
        ButtonStyle::Primary => "primary_filled",
        ButtonStyle::Danger => "danger",
        ButtonStyle::Default => "default",
    };
    Some(json!({
        "tag": "button",
        "text": { "tag": "plain_text", "content": label },
        "type": kind,
        "behaviors": [{ "type": "callback", "value": value }],
    }))
}

/// Whether the card's buttons include Stop, i.e. the turn it shows still runs.
pub(crate) fn has_stop(buttons: &[Button]) -> bool {
    buttons
        .iter()
        .any(|b| matches!(b.action, ButtonAction::Stop { .. }))
}
