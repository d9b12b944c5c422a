//! Cards as Feishu Card JSON 2.0. (Being written.)

use serde_json::{Value, json};
use workmate_cards::{ButtonAction, Card};

/// The Card JSON 2.0 of `card`.
pub fn render(card: &Card) -> Value {
    let _ = card;
    json!({ "schema": "2.0", "config": { "update_multi": true }, "body": { "elements": [] } })
}

/// The action a button's callback `value` carries.
pub fn decode_action(value: &Value) -> Option<ButtonAction> {
    serde_json::from_value(value.clone()).ok()
}
