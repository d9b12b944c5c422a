//! Reading the canonical history: what a model is sent, and what a resume must finish.
//!
//! Invariants: the history is never modified here; the outbound view drops notices and every
//! display-only sidecar (reasoning, usage, `_display`, authorship) and is recomputed per call, so
//! a model switch mid-session always gets the right degrade of images and PDFs.

use std::collections::HashSet;

use workmate_protocol::{CompactionView, ContentPart, Message, NoticeKind, ToolCall, UserContent};
use workmate_providers::Capabilities;

/// The text that replaces an image for a model that cannot see.
pub(crate) const IMAGE_PLACEHOLDER: &str = "[image attachment — not viewable by this model]";

/// Longest `_raw` argument text kept in history.
const RAW_KEEP_CHARS: usize = 200;

/// The history as a model with `caps` is sent it, under the session's compaction view. In a
/// conversation where more than one person has spoken (a shared one), each person's message
/// starts with their name, so the model knows who said what.
pub(crate) fn outbound(
    history: &[Message],
    view: Option<&CompactionView>,
    caps: &Capabilities,
) -> Vec<Message> {
    let several = several_authors(history);
    crate::compaction::viewed(history, view)
        .filter(|m| !m.is_notice())
        .map(|message| match message.into_owned() {
            Message::User {
                content,
                ts,
                author,
                ..
            } => {
                let content = degrade(content, caps);
                Message::User {
                    content: match (several, author) {
                        (true, Some(author)) => signed(content, &author),
                        _ => content,
                    },
                    ts,
                    author: None,
                    display: None,
                }
            }
            Message::Assistant {
                content,
                ts,
                tool_calls,
                provider_state,
                ..
            } => Message::Assistant {
                content,
                ts,
                tool_calls,
                reasoning: None,
                usage: None,
                provider_state,
            },
            Message::Tool {
                tool_call_id,
                content,
                ts,
                ..
            } => Message::Tool {
                tool_call_id,
                content,
                ts,
                display: None,
            },
            other => other,
        })
        .collect()
}

/// Whether more than one person wrote the history's messages.
fn several_authors(history: &[Message]) -> bool {
    let mut authors = history.iter().filter_map(|m| match m {
        Message::User {
            author: Some(author),
            ..
        } => Some(&author.user_id),
        _ => None,
    });
    let Some(first) = authors.next() else {
        return false;
    };
    authors.any(|other| other != first)
}

/// `content` preceded by who wrote it: `[Ana (slack-U1)] …`.
fn signed(content: UserContent, author: &workmate_protocol::Actor) -> UserContent {
    let who = match author.name.as_deref().filter(|n| !n.trim().is_empty()) {
        Some(name) => format!("[{name} ({})] ", author.user_id),
        None => format!("[{}] ", author.user_id),
    };
    match content {
        UserContent::Text(text) => UserContent::Text(format!("{who}{text}")),
        UserContent::Parts(mut parts) => {
            parts.insert(0, ContentPart::Text { text: who });
            UserContent::Parts(parts)
        }
    }
}

fn degrade(content: UserContent, caps: &Capabilities) -> UserContent {
    let UserContent::Parts(parts) = content else {
        return content;
    };
    let parts = parts
        .into_iter()
        .map(|part| match part {
            ContentPart::ImageUrl { .. } if !caps.vision => ContentPart::Text {
                text: IMAGE_PLACEHOLDER.to_owned(),
            },
            ContentPart::File { file } if !caps.pdf => ContentPart::Text {
                text: match &file.text {
                    Some(text) => crate::documents::as_text_part(&file.filename, text),
                    None => format!(
                        "[PDF attachment {} — not readable by this model, and no text could be \
                         extracted from it]",
                        file.filename
                    ),
                },
            },
            other => other,
        })
        .collect();
    UserContent::Parts(parts)
}

/// Whether the history holds an image a model could be asked about.
pub(crate) fn has_images(history: &[Message]) -> bool {
    history.iter().any(|m| match m {
        Message::User {
            content: UserContent::Parts(parts),
            ..
        } => parts
            .iter()
            .any(|p| matches!(p, ContentPart::ImageUrl { .. })),
        _ => false,
    })
}

/// Whether the history holds anything besides the system prompt.
pub(crate) fn has_conversation(history: &[Message]) -> bool {
    history.iter().any(|m| !matches!(m, Message::System { .. }))
}

/// The tool calls of the last assistant message that have no result yet, unless a user message
/// came after it (then nothing is pending).
pub(crate) fn unanswered_trailing_calls(history: &[Message]) -> Vec<ToolCall> {
    let answered: HashSet<_> = history
        .iter()
        .filter_map(|m| match m {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id),
            _ => None,
        })
        .collect();
    for message in history.iter().rev() {
        match message {
            Message::User { .. } => return Vec::new(),
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                return tool_calls
                    .iter()
                    .filter(|c| !answered.contains(&c.id))
                    .cloned()
                    .collect();
            }
            _ => {}
        }
    }
    Vec::new()
}

/// Whether `retry` may run: the history ends (ignoring model-switch notices) in an error notice.
pub(crate) fn ends_in_error(history: &[Message]) -> bool {
    history
        .iter()
        .rev()
        .find(|m| {
            !matches!(
                m,
                Message::Notice {
                    kind: NoticeKind::ModelSwitch,
                    ..
                }
            )
        })
        .is_some_and(|m| {
            matches!(
                m,
                Message::Notice {
                    kind: NoticeKind::Error,
                    ..
                }
            )
        })
}

/// Cuts overlong unparsed argument text before the call enters history.
pub(crate) fn shrink_mangled(call: &mut ToolCall) {
    let Some(raw) = call.raw_arguments() else {
        return;
    };
    let total = raw.chars().count();
    if total <= RAW_KEEP_CHARS {
        return;
    }
    let kept: String = raw.chars().take(RAW_KEEP_CHARS).collect();
    let text = format!("{kept}… [unparsed tool-call text, {total} chars, truncated in history]");
    call.arguments = serde_json::json!({ ToolCall::RAW_KEY: text });
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmate_protocol::{ImageUrl, ToolCallId};

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: ToolCallId::from(id),
            name: "read_file".into(),
            arguments: serde_json::json!({}),
        }
    }

    fn assistant(calls: Vec<ToolCall>) -> Message {
        Message::Assistant {
            content: String::new(),
            ts: 0,
            tool_calls: calls,
            reasoning: Some("r".into()),
            usage: None,
            provider_state: Box::default(),
        }
    }

    fn tool(id: &str) -> Message {
        Message::Tool {
            tool_call_id: ToolCallId::from(id),
            content: "ok".into(),
            ts: 0,
            display: Some(serde_json::json!({"x": 1})),
        }
    }

    fn user(text: &str) -> Message {
        Message::User {
            content: UserContent::Text(text.into()),
            ts: 0,
            author: None,
            display: Some("shown".into()),
        }
    }

    #[test]
    fn trailing_calls_without_results_are_pending() {
        let history = vec![user("hi"), assistant(vec![call("a"), call("b")]), tool("a")];
        let pending: Vec<_> = unanswered_trailing_calls(&history)
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(pending, vec![ToolCallId::from("b")]);
        let mut answered = history.clone();
        answered.push(tool("b"));
        assert!(unanswered_trailing_calls(&answered).is_empty());
        let mut moved_on = history;
        moved_on.push(user("next"));
        assert!(unanswered_trailing_calls(&moved_on).is_empty());
    }

    #[test]
    fn outbound_drops_notices_and_sidecars() {
        let history = vec![
            user("hi"),
            Message::Notice {
                kind: NoticeKind::Error,
                text: Some("boom".into()),
                ts: 0,
            },
            assistant(vec![call("a")]),
            tool("a"),
        ];
        let out = outbound(&history, None, &Capabilities::default());
        assert_eq!(out.len(), 3);
        let json = serde_json::to_string(&out).unwrap();
        assert!(
            !json.contains("_display") && !json.contains("reasoning") && !json.contains("shown"),
            "{json}"
        );
    }

    #[test]
    fn in_a_conversation_of_several_people_each_message_names_its_author() {
        let said = |who: &str, name: &str, text: &str| Message::User {
            content: UserContent::Text(text.into()),
            ts: 0,
            author: Some(workmate_protocol::Actor::named(who, name)),
            display: None,
        };
        let texts = |history: &[Message]| -> Vec<String> {
            outbound(history, None, &Capabilities::default())
                .into_iter()
                .filter_map(|m| match m {
                    Message::User {
                        content: UserContent::Text(text),
                        author,
                        ..
                    } => {
                        assert!(author.is_none(), "authorship itself is never sent");
                        Some(text)
                    }
                    _ => None,
                })
                .collect()
        };
        // One person: their words as they are.
        let alone = vec![said("u1", "Ana", "add the EU numbers")];
        assert_eq!(texts(&alone), ["add the EU numbers"]);
        let shared = vec![
            said("u1", "Ana", "summarise the sales"),
            said("u2", "Bo", "also add the EU numbers"),
        ];
        assert_eq!(
            texts(&shared),
            [
                "[Ana (u1)] summarise the sales",
                "[Bo (u2)] also add the EU numbers"
            ]
        );
    }

    #[test]
    fn images_degrade_for_models_without_vision() {
        let history = vec![Message::User {
            content: UserContent::Parts(vec![ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,AA".into(),
                },
            }]),
            ts: 0,
            author: None,
            display: None,
        }];
        let blind = Capabilities {
            vision: false,
            ..Capabilities::default()
        };
        let json = serde_json::to_string(&outbound(&history, None, &blind)).unwrap();
        assert!(
            json.contains(IMAGE_PLACEHOLDER) && !json.contains("base64"),
            "{json}"
        );
        let seeing = Capabilities {
            vision: true,
            ..Capabilities::default()
        };
        assert!(
            serde_json::to_string(&outbound(&history, None, &seeing))
                .unwrap()
                .contains("base64")
        );
        assert!(has_images(&history));
    }

    #[test]
    fn retry_needs_an_error_at_the_tail() {
        let error = Message::Notice {
            kind: NoticeKind::Error,
            text: None,
            ts: 0,
        };
        let switch = Message::Notice {
            kind: NoticeKind::ModelSwitch,
            text: None,
            ts: 0,
        };
        assert!(ends_in_error(&[user("x"), error.clone(), switch]));
        assert!(!ends_in_error(&[error, user("x")]));
    }

    #[test]
    fn long_raw_arguments_are_cut() {
        let mut c = call("a");
        c.arguments = serde_json::json!({"_raw": "x".repeat(500)});
        shrink_mangled(&mut c);
        let raw = c.raw_arguments().unwrap();
        assert!(raw.starts_with(&"x".repeat(200)));
        assert!(raw.ends_with("[unparsed tool-call text, 500 chars, truncated in history]"));
    }
}
