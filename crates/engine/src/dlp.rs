//! Redacting what is sent to a model, when a tenant asks: the tenant setting
//! `dlp: {"model": true}`.
//!
//! Invariants: with the setting on, every request carries the outbound history with the
//! process-wide DLP rules applied to user text, answer text, tool-call arguments and tool results
//! (the instructions are the operator's and stay as written); a tool result is redacted before
//! it is stored, and the model learns only how many values were hidden, through the result's
//! `_display` sidecar (`hidden_fields`), which is itself never sent. Audit records and logs are
//! redacted whatever the setting.

use serde_json::Value;
use workmate_protocol::{ContentPart, Message, UserContent};

/// Whether the tenant's `settings` ask for model input to be redacted.
pub fn redacts_model_input(settings: &Value) -> bool {
    settings
        .get("dlp")
        .and_then(|d| d.get("model"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// `dlp` as stored, or why not.
pub(crate) fn parse_setting(value: &Value) -> Result<Value, String> {
    let example = r#"{"model": true}"#;
    let ok = value
        .as_object()
        .is_some_and(|o| o.iter().all(|(k, v)| k == "model" && v.is_boolean()));
    if ok {
        Ok(value.clone())
    } else {
        Err(format!(
            "is an object such as {example} (model: redact what is sent to models)"
        ))
    }
}

/// `text` redacted.
fn text(text: String) -> String {
    let redacted = workmate_dlp::global().text(&text);
    if redacted.hidden == 0 {
        text
    } else {
        redacted.value.into_owned()
    }
}

/// `messages` (an outbound view) with every person's, model's and tool's text redacted.
pub(crate) fn redact_messages(messages: Vec<Message>) -> Vec<Message> {
    messages
        .into_iter()
        .map(|message| match message {
            Message::User {
                content,
                ts,
                author,
                display,
            } => Message::User {
                content: match content {
                    UserContent::Text(t) => UserContent::Text(text(t)),
                    UserContent::Parts(parts) => UserContent::Parts(
                        parts
                            .into_iter()
                            .map(|part| match part {
                                ContentPart::Text { text: t } => {
                                    ContentPart::Text { text: text(t) }
                                }
                                other => other,
                            })
                            .collect(),
                    ),
                },
                ts,
                author,
                display,
            },
            Message::Assistant {
                content,
                ts,
                tool_calls,
                reasoning,
                usage,
                provider_state,
            } => Message::Assistant {
                content: text(content),
                ts,
                tool_calls: tool_calls
                    .into_iter()
                    .map(|mut call| {
                        call.arguments = workmate_dlp::global().json(&call.arguments).value;
                        call
                    })
                    .collect(),
                reasoning,
                usage,
                provider_state,
            },
            Message::Tool {
                tool_call_id,
                content,
                ts,
                display,
            } => Message::Tool {
                tool_call_id,
                content: text(content),
                ts,
                display,
            },
            other => other,
        })
        .collect()
}

/// A tool result redacted before it is stored and shown to the model: the text, and how many
/// values were hidden.
pub(crate) fn redact_result(content: &str) -> (String, u32) {
    let redacted = workmate_dlp::global().text(content);
    (redacted.value.into_owned(), redacted.hidden)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use workmate_protocol::ToolCall;

    use super::*;

    const CANARY: &str = "sk-canary-0123456789abcdefXYZ";

    #[test]
    fn every_text_the_model_would_see_is_redacted() {
        let messages = vec![
            Message::System {
                content: "You are workmate.".into(),
            },
            Message::User {
                content: UserContent::Text(format!("use {CANARY}")),
                ts: 0,
                author: None,
                display: None,
            },
            Message::Assistant {
                content: format!("I will use {CANARY}"),
                ts: 0,
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "run_shell".into(),
                    arguments: json!({"command": format!("curl -H 'x: {CANARY}'")}),
                }],
                reasoning: None,
                usage: None,
                provider_state: Box::default(),
            },
            Message::Tool {
                tool_call_id: "c1".into(),
                content: format!("echoed {CANARY}"),
                ts: 0,
                display: None,
            },
        ];
        let out = redact_messages(messages);
        let text = serde_json::to_string(&out).unwrap();
        assert!(!text.contains(CANARY), "{text}");
        assert!(text.contains("You are workmate."));
        assert_eq!(text.matches("[redacted:api_key]").count(), 4, "{text}");
    }

    #[test]
    fn the_setting_is_an_object_of_booleans() {
        assert!(redacts_model_input(&json!({"dlp": {"model": true}})));
        assert!(!redacts_model_input(&json!({})));
        assert!(parse_setting(&json!({"model": true})).is_ok());
        assert!(parse_setting(&json!({"model": "yes"})).is_err());
        assert!(parse_setting(&json!({"logs": false})).is_err());
    }
}
