//! Which CardKit call an update needs: while a card streams and only the text of one markdown
//! element grew or changed, that element's content is set (the typewriter effect); any other
//! change replaces the whole card.

use serde_json::Value;

/// The cheapest call that turns the last rendered card into the next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Set one element's text.
    Element {
        /// The element.
        id: String,
        /// Its whole new text.
        content: String,
    },
    /// Replace the card; close its streaming mode first when `close_streaming`.
    Whole {
        /// The card was (or may have been) streaming and now is not.
        close_streaming: bool,
    },
    /// Nothing visible changed.
    Nothing,
}

/// Whether a rendered card is in streaming mode.
pub(crate) fn streaming(card: &Value) -> bool {
    card.pointer("/config/streaming_mode")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The card with its streaming mode off.
pub(crate) fn without_streaming(card: &Value) -> Value {
    let mut card = card.clone();
    if let Some(config) = card.get_mut("config").and_then(Value::as_object_mut) {
        config.insert("streaming_mode".into(), Value::Bool(false));
    }
    card
}

fn elements(card: &Value) -> &[Value] {
    card.pointer("/body/elements")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The change from `last` (unknown after a restart) to `next`.
pub(crate) fn change(last: Option<&Value>, next: &Value) -> Change {
    let Some(last) = last else {
        // Unknown: the card may still be streaming, so close it when the new state does not.
        return Change::Whole {
            close_streaming: !streaming(next),
        };
    };
    if last == next {
        return Change::Nothing;
    }
    if !streaming(next) {
        return Change::Whole {
            close_streaming: streaming(last),
        };
    }
    let whole = Change::Whole {
        close_streaming: false,
    };
    if !streaming(last) || last.get("header") != next.get("header") {
        return whole;
    }
    let (before, after) = (elements(last), elements(next));
    if before.len() != after.len() {
        return whole;
    }
    let mut changed = before.iter().zip(after).filter(|(a, b)| a != b);
    let (Some((old, new)), None) = (changed.next(), changed.next()) else {
        return whole;
    };
    let same_shape = old.get("tag") == new.get("tag")
        && old.get("element_id") == new.get("element_id")
        && new.get("tag").and_then(Value::as_str) == Some("markdown")
        && without_content(old) == without_content(new);
    match (same_shape, new.get("element_id"), new.get("content")) {
        (true, Some(Value::String(id)), Some(Value::String(content))) => Change::Element {
            id: id.clone(),
            content: content.clone(),
        },
        _ => whole,
    }
}

fn without_content(element: &Value) -> Value {
    let mut element = element.clone();
    if let Some(map) = element.as_object_mut() {
        map.remove("content");
    }
    element
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn card(streaming: bool, texts: &[&str]) -> Value {
        let elements: Vec<Value> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"tag": "markdown", "element_id": format!("e{i}"), "content": t}))
            .collect();
        json!({"schema": "2.0", "config": {"streaming_mode": streaming}, "body": {"elements": elements}})
    }

    #[test]
    fn a_growing_answer_streams_into_its_element() {
        let change = change(
            Some(&card(true, &["a", "Hel"])),
            &card(true, &["a", "Hello"]),
        );
        assert_eq!(
            change,
            Change::Element {
                id: "e1".into(),
                content: "Hello".into()
            }
        );
    }

    #[test]
    fn new_elements_or_the_end_of_streaming_replace_the_card() {
        let last = card(true, &["a"]);
        assert_eq!(
            change(Some(&last), &card(true, &["a", "b"])),
            Change::Whole {
                close_streaming: false
            }
        );
        assert_eq!(
            change(Some(&last), &card(false, &["a"])),
            Change::Whole {
                close_streaming: true
            }
        );
        assert_eq!(
            change(None, &card(false, &["a"])),
            Change::Whole {
                close_streaming: true
            }
        );
        assert_eq!(
            change(None, &card(true, &["a"])),
            Change::Whole {
                close_streaming: false
            }
        );
        assert_eq!(change(Some(&last), &last.clone()), Change::Nothing);
    }
}
