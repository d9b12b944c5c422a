//! Canonical history → Chat Completions request body (spec §6.3).
//!
//! Invariant: only what the model must see is sent. Notices, display-only sidecars (`_display`,
//! `reasoning`, `usage`, authors, timestamps) and every provider-private `_openai`, `_anthropic`
//! and `_gemini` state are dropped here: Chat Completions has no replay state of its own.

use workmate_protocol::{ContentPart, Message, ToolCall, UserContent};

use super::types::{
    ChatRequest, StreamOptions, WireFile, WireFunction, WireFunctionCall, WireMessage, WirePart,
    WireTool, WireToolCall, WireUrl, WireUserContent,
};
use crate::ModelRequest;

/// The body for one streamed call.
pub(super) fn build(request: &ModelRequest) -> ChatRequest<'_> {
    ChatRequest {
        model: &request.model,
        messages: request.messages.iter().filter_map(message).collect(),
        tools: request
            .tools
            .iter()
            .map(|tool| WireTool {
                kind: "function",
                function: WireFunction {
                    name: &tool.name,
                    description: &tool.description,
                    parameters: &tool.parameters,
                },
            })
            .collect(),
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
    }
}

/// One canonical message on the wire; `None` for what is never sent.
fn message(message: &Message) -> Option<WireMessage<'_>> {
    Some(match message {
        Message::System { content } => WireMessage::System { content },
        Message::User { content, .. } => WireMessage::User {
            content: match content {
                UserContent::Text(text) => WireUserContent::Text(text),
                UserContent::Parts(parts) => {
                    WireUserContent::Parts(parts.iter().filter_map(part).collect())
                }
            },
        },
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => WireMessage::Assistant {
            content: (!content.is_empty() || tool_calls.is_empty()).then_some(content.as_str()),
            tool_calls: tool_calls.iter().map(tool_call).collect(),
        },
        Message::Tool {
            tool_call_id,
            content,
            ..
        } => WireMessage::Tool {
            tool_call_id: tool_call_id.as_str(),
            content,
        },
        // The engine already drops notices; a message kind added later is not sent until this
        // conversion learns it.
        _ => return None,
    })
}

fn part(part: &ContentPart) -> Option<WirePart<'_>> {
    Some(match part {
        ContentPart::Text { text } => WirePart::Text { text },
        ContentPart::ImageUrl { image_url } => WirePart::ImageUrl {
            image_url: WireUrl {
                url: &image_url.url,
            },
        },
        ContentPart::File { file } => WirePart::File {
            file: WireFile {
                filename: &file.filename,
                file_data: &file.file_data,
            },
        },
        _ => {
            tracing::warn!("A user message part of an unknown kind was not sent to the model.");
            return None;
        }
    })
}

/// A replayed call: arguments the model wrote unparseably go back exactly as it wrote them.
fn tool_call(call: &ToolCall) -> WireToolCall<'_> {
    let arguments = match call.raw_arguments() {
        Some(raw) => raw.to_owned(),
        None => call.arguments.to_string(),
    };
    WireToolCall {
        id: call.id.as_str(),
        kind: "function",
        function: WireFunctionCall {
            name: &call.name,
            arguments,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use workmate_protocol::{NoticeKind, ProviderState, SessionId, ToolSpec};

    use super::*;

    fn body(messages: Vec<Message>, tools: Vec<ToolSpec>) -> serde_json::Value {
        let request = ModelRequest {
            session_id: SessionId::new(),
            model: "m".into(),
            messages,
            tools,
        };
        serde_json::to_value(build(&request)).unwrap()
    }

    #[test]
    fn assistant_content_is_null_only_beside_tool_calls() {
        let assistant = |content: &str, tool_calls| Message::Assistant {
            content: content.into(),
            ts: 1,
            tool_calls,
            reasoning: Some("hidden".into()),
            usage: None,
            provider_state: Box::new(ProviderState {
                openai: Some(json!({"items": []})),
                anthropic: Some(json!([])),
                gemini: Some(json!({})),
            }),
        };
        let call = ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({"_raw": "{\"command\": \"ls"}),
        };
        let notice = Message::Notice {
            kind: NoticeKind::Interrupted,
            text: None,
            ts: 2,
        };
        let value = body(
            vec![
                assistant("", vec![call]),
                notice,
                assistant("", vec![]),
                assistant("done", vec![]),
            ],
            vec![],
        );
        assert_eq!(
            value["messages"],
            json!([
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "shell", "arguments": "{\"command\": \"ls"}}]},
                {"role": "assistant", "content": ""},
                {"role": "assistant", "content": "done"},
            ])
        );
        assert!(value.get("tools").is_none(), "no tools, no `tools` key");
    }
}
