//! The template cards the sandbox takes, checked as WeCom checks them before showing one.
//!
//! Invariant: a card is shown only when it is a `button_interaction` or a `text_notice` with a
//! non-empty `main_title.title` and at most six `horizontal_content_list` rows, each with a
//! `keyname`; a `button_interaction` has a `task_id` (at most 128 bytes) and one to six buttons,
//! each with a `text` and a `key` (at most 1024 bytes) of its own; a `text_notice` has the
//! `card_action` WeCom requires of it. Other card types are refused: workmate sends none, and the
//! page draws only these two.

use std::collections::HashSet;

use serde_json::Value;

/// Rows of `horizontal_content_list`.
const MAX_ROWS: usize = 6;
/// Buttons of a `button_list`.
const MAX_BUTTONS: usize = 6;
/// Bytes of a `task_id`.
const MAX_TASK_ID_BYTES: usize = 128;
/// Bytes of a button's `key`.
const MAX_KEY_BYTES: usize = 1024;

fn text<'a>(value: &'a Value, name: &str) -> Option<&'a str> {
    value
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Why WeCom would not show `card`, if it would not.
pub(crate) fn check(card: &Value) -> Result<(), String> {
    if !card.is_object() {
        return Err("template_card is not an object".into());
    }
    let card_type = text(card, "card_type").unwrap_or_default();
    if card
        .get("main_title")
        .and_then(|t| text(t, "title"))
        .is_none()
    {
        return Err("main_title.title is missing".into());
    }
    let rows = card
        .get("horizontal_content_list")
        .map_or(Some(&[][..]), |r| r.as_array().map(Vec::as_slice))
        .ok_or("horizontal_content_list is not a list")?;
    if rows.len() > MAX_ROWS {
        return Err(format!(
            "horizontal_content_list has {} rows (at most {MAX_ROWS})",
            rows.len()
        ));
    }
    if rows.iter().any(|row| text(row, "keyname").is_none()) {
        return Err("a horizontal_content_list row has no keyname".into());
    }
    match card_type {
        "button_interaction" => {
            let task_id = text(card, "task_id").ok_or("task_id is missing")?;
            if task_id.len() > MAX_TASK_ID_BYTES {
                return Err(format!("task_id is over {MAX_TASK_ID_BYTES} bytes"));
            }
            let buttons = card
                .get("button_list")
                .and_then(Value::as_array)
                .ok_or("button_list is missing")?;
            if buttons.is_empty() || buttons.len() > MAX_BUTTONS {
                return Err(format!(
                    "button_list has {} buttons (1 to {MAX_BUTTONS})",
                    buttons.len()
                ));
            }
            let mut keys = HashSet::new();
            for button in buttons {
                let key = text(button, "key").ok_or("a button has no key")?;
                if text(button, "text").is_none() {
                    return Err("a button has no text".into());
                }
                if key.len() > MAX_KEY_BYTES {
                    return Err(format!("a button's key is over {MAX_KEY_BYTES} bytes"));
                }
                if !keys.insert(key) {
                    return Err(format!("two buttons have the key {key:?}"));
                }
            }
            Ok(())
        }
        "text_notice" => {
            let action = card
                .get("card_action")
                .and_then(|a| a.get("type"))
                .and_then(Value::as_i64);
            if action.is_none() {
                return Err("a text_notice needs card_action.type".into());
            }
            Ok(())
        }
        other => Err(format!(
            "card_type {other:?} is not one the sandbox shows (button_interaction, text_notice)"
        )),
    }
}

/// The `task_id` of a card.
pub(crate) fn task_id(card: &Value) -> Option<&str> {
    text(card, "task_id")
}

/// Whether the `button_interaction` card has a button with `key`.
pub(crate) fn has_button(card: &Value, key: &str) -> bool {
    text(card, "card_type") == Some("button_interaction")
        && card
            .get("button_list")
            .and_then(Value::as_array)
            .is_some_and(|buttons| buttons.iter().any(|b| text(b, "key") == Some(key)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn prompt() -> Value {
        json!({"card_type": "button_interaction", "main_title": {"title": "Approve run_shell?"},
               "sub_title_text": "echo hi",
               "horizontal_content_list": [{"keyname": "Asked by", "value": "zhangsan"}],
               "button_list": [{"text": "Approve once", "style": 1, "key": "{\"a\":1}"},
                               {"text": "Deny", "style": 3, "key": "{\"a\":2}"}],
               "task_id": "t1"})
    }

    #[test]
    fn a_prompt_and_a_notice_pass_and_broken_cards_say_why() {
        assert_eq!(check(&prompt()), Ok(()));
        assert!(has_button(&prompt(), "{\"a\":2}"));
        assert!(!has_button(&prompt(), "{\"a\":3}"));
        assert_eq!(task_id(&prompt()), Some("t1"));
        let notice = json!({"card_type": "text_notice", "main_title": {"title": "Approved"},
                            "card_action": {"type": 0}, "task_id": "t1"});
        assert_eq!(check(&notice), Ok(()));
        assert!(!has_button(&notice, "{\"a\":1}"));

        let mut broken = prompt();
        broken["button_list"][1]["key"] = json!("{\"a\":1}");
        assert!(check(&broken).unwrap_err().contains("two buttons"));
        let mut broken = prompt();
        broken["task_id"] = json!("");
        assert!(check(&broken).unwrap_err().contains("task_id"));
        let mut broken = prompt();
        broken["button_list"] = json!([]);
        assert!(check(&broken).is_err());
        let mut broken = prompt();
        broken["main_title"] = json!({});
        assert!(check(&broken).is_err());
        assert!(check(&json!({"card_type": "text_notice", "main_title": {"title": "x"}})).is_err());
        assert!(
            check(&json!({"card_type": "vote_interaction", "main_title": {"title": "x"}})).is_err()
        );
        assert!(check(&json!("card")).is_err());
    }
}
