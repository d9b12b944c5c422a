//! The canonical history converted into one Anthropic Messages request (spec §6.3).
//!
//! Invariants:
//! * System messages become the top-level `system` blocks; `messages` alternates user and
//!   assistant, because consecutive messages of one role are merged (tool results, and a steering
//!   user message that follows them, share one user message).
//! * In a user message the `tool_result` blocks come first, as Anthropic requires.
//! * Only this provider's `_anthropic` sidecar is replayed; other providers' sidecars and every
//!   display-only field (`_display`, `ts`, `reasoning`, `usage`, `author`) are never sent, since
//!   the wire types have no place for them.
//! * Exactly two `cache_control` breakpoints at most: the last system block and the last
//!   cacheable block of the final message. They exist only in the request, never in history.
//! * No empty text block is sent (Anthropic refuses them), so a message left with no blocks is
//!   dropped.

use serde_json::{Map, Value};
use workmate_protocol::{ContentPart, Message, ToolCall, ToolSpec, UserContent};

use super::types::{
    Block, BlockBody, CacheControl, MAX_TOKENS, MessagesRequest, ReplayState, Role, Source,
    WireMessage, WireTool,
};

/// The request body for `model` (the bare id) over `messages` with `tools` offered.
pub(crate) fn build(model: &str, messages: &[Message], tools: &[ToolSpec]) -> MessagesRequest {
    let mut system = Vec::new();
    let mut wire: Vec<WireMessage> = Vec::new();
    for message in messages {
        match message {
            // Anthropic has no system role inside `messages`; a later system message keeps its
            // authority by joining the instructions rather than posing as the user's words.
            Message::System { content } if !content.trim().is_empty() => {
                system.push(Block::text(content.clone()));
            }
            Message::User { content, .. } => push(&mut wire, Role::User, user_blocks(content)),
            Message::Assistant {
                content,
                tool_calls,
                provider_state,
                ..
            } => {
                let replay = provider_state
                    .anthropic
                    .as_ref()
                    .map(ReplayState::from_value)
                    .unwrap_or_default();
                push(
                    &mut wire,
                    Role::Assistant,
                    assistant_blocks(content, tool_calls, replay),
                );
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => {
                let result = Block::new(BlockBody::ToolResult {
                    tool_use_id: tool_call_id.as_str().to_owned(),
                    content: content.clone(),
                });
                push(&mut wire, Role::User, vec![result]);
            }
            // Notices are display-only; an empty system message has nothing to say.
            _ => {}
        }
    }
    if let Some(last) = system.last_mut() {
        last.cache_control = Some(CacheControl::EPHEMERAL);
    }
    if let Some(block) = wire
        .last_mut()
        .and_then(|m| m.content.iter_mut().rev().find(|b| b.cacheable()))
    {
        block.cache_control = Some(CacheControl::EPHEMERAL);
    }
    MessagesRequest {
        model: model.to_owned(),
        max_tokens: MAX_TOKENS,
        system,
        messages: wire,
        tools: tools.iter().map(wire_tool).collect(),
        stream: true,
    }
}

/// Appends `blocks` as a message of `role`, merged into the previous message when it has the
/// same role. Tool results join the leading run of tool results, ahead of any text already there.
fn push(wire: &mut Vec<WireMessage>, role: Role, blocks: Vec<Block>) {
    if blocks.is_empty() {
        return;
    }
    match wire.last_mut() {
        Some(last) if last.role == role => {
            for block in blocks {
                if block.is_tool_result() {
                    let at = last
                        .content
                        .iter()
                        .take_while(|b| b.is_tool_result())
                        .count();
                    last.content.insert(at, block);
                } else {
                    last.content.push(block);
                }
            }
        }
        _ => wire.push(WireMessage {
            role,
            content: blocks,
        }),
    }
}

fn user_blocks(content: &UserContent) -> Vec<Block> {
    match content {
        UserContent::Text(text) if text.is_empty() => Vec::new(),
        UserContent::Text(text) => vec![Block::text(text.clone())],
        UserContent::Parts(parts) => parts.iter().filter_map(part_block).collect(),
    }
}

fn part_block(part: &ContentPart) -> Option<Block> {
    match part {
        ContentPart::Text { text } if text.is_empty() => None,
        ContentPart::Text { text } => Some(Block::text(text.clone())),
        ContentPart::ImageUrl { image_url } => Some(image_block(&image_url.url)),
        ContentPart::File { file } => Some(document_block(&file.filename, &file.file_data)),
        // A part kind this client does not know yet: leave it out rather than guess.
        _ => None,
    }
}

fn image_block(url: &str) -> Block {
    if let Some((media_type, data)) = base64_data_url(url) {
        return Block::new(BlockBody::Image {
            source: Source::Base64 {
                media_type: media_type.to_owned(),
                data: data.to_owned(),
            },
        });
    }
    if url.starts_with("https://") || url.starts_with("http://") {
        return Block::new(BlockBody::Image {
            source: Source::Url {
                url: url.to_owned(),
            },
        });
    }
    Block::text("[image attachment — could not be sent: not a base64 data URL]")
}

fn document_block(filename: &str, file_data: &str) -> Block {
    let pdf = base64_data_url(file_data).filter(|(media_type, _)| {
        media_type.eq_ignore_ascii_case("application/pdf")
            || (media_type.eq_ignore_ascii_case("application/octet-stream")
                && filename.to_ascii_lowercase().ends_with(".pdf"))
    });
    match pdf {
        Some((_, data)) => Block::new(BlockBody::Document {
            source: Source::Base64 {
                media_type: "application/pdf".to_owned(),
                data: data.to_owned(),
            },
            title: (!filename.is_empty()).then(|| filename.to_owned()),
        }),
        None => Block::text(format!(
            "[Attached file: {filename} — could not be sent: not a base64 PDF data URL]"
        )),
    }
}

/// `data:<media type>[;params];base64,<data>` split into the media type and the data.
fn base64_data_url(url: &str) -> Option<(&str, &str)> {
    let (meta, data) = url.strip_prefix("data:")?.split_once(',')?;
    let mut params = meta.split(';');
    let media_type = params.next()?.trim();
    let base64 = params.any(|p| p.trim().eq_ignore_ascii_case("base64"));
    (base64 && !media_type.is_empty() && !data.is_empty()).then_some((media_type, data))
}

/// Replayed thinking first (Anthropic wants it ahead of the text and tool calls it led to), then
/// the text, then the tool calls.
fn assistant_blocks(text: &str, tool_calls: &[ToolCall], replay: ReplayState) -> Vec<Block> {
    let mut blocks: Vec<Block> = replay
        .thinking_blocks
        .into_iter()
        .map(Block::from)
        .collect();
    if !text.is_empty() {
        blocks.push(Block::text(text));
    }
    blocks.extend(tool_calls.iter().map(|call| {
        Block::new(BlockBody::ToolUse {
            id: call.id.as_str().to_owned(),
            name: call.name.clone(),
            input: tool_input(call),
        })
    }));
    blocks
}

/// The `input` of a replayed tool call. Arguments the model mangled (`{"_raw": text}`) are sent
/// as `{}`: `input` must be an object, and the raw text is no valid input for the tool; the
/// engine's tool result already tells the model its arguments were unreadable.
fn tool_input(call: &ToolCall) -> Value {
    match &call.arguments {
        Value::Object(_) if call.raw_arguments().is_none() => call.arguments.clone(),
        _ => Value::Object(Map::new()),
    }
}

/// A tool as Anthropic takes it; a schema that is not an object becomes the empty object schema
/// (`input_schema` must be a JSON Schema object).
fn wire_tool(tool: &ToolSpec) -> WireTool {
    let input_schema = match &tool.parameters {
        schema @ Value::Object(_) => schema.clone(),
        _ => serde_json::json!({"type": "object", "properties": {}}),
    };
    WireTool {
        name: tool.name.clone(),
        description: tool.description.clone(),
        input_schema,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use workmate_protocol::ProviderState;

    use super::*;

    fn user(text: &str) -> Message {
        Message::User {
            content: text.into(),
            ts: 1,
            author: None,
            display: None,
        }
    }

    fn tool(id: &str, content: &str) -> Message {
        Message::Tool {
            tool_call_id: id.into(),
            content: content.into(),
            ts: 1,
            display: None,
        }
    }

    fn assistant(calls: Vec<ToolCall>) -> Message {
        Message::Assistant {
            content: String::new(),
            ts: 1,
            tool_calls: calls,
            reasoning: None,
            usage: None,
            provider_state: Box::new(ProviderState::default()),
        }
    }

    fn call(id: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "shell".into(),
            arguments,
        }
    }

    fn body(messages: &[Message]) -> Value {
        serde_json::to_value(build("m", messages, &[])).unwrap()
    }

    #[test]
    fn mangled_arguments_are_sent_as_an_empty_object() {
        let raw = ToolCall::parse_arguments("{\"command\": \"ls");
        let sent = body(&[
            user("go"),
            assistant(vec![call("a", raw), call("b", json!({"command": "ls"}))]),
        ]);
        assert_eq!(sent["messages"][1]["content"][0]["input"], json!({}));
        assert_eq!(
            sent["messages"][1]["content"][1]["input"],
            json!({"command": "ls"})
        );
    }

    #[test]
    fn tool_results_stay_ahead_of_text_in_a_user_message() {
        // A steering message that slipped between two results must not split them.
        let sent = body(&[
            user("go"),
            assistant(vec![call("a", json!({})), call("b", json!({}))]),
            tool("a", "one"),
            user("also this"),
            tool("b", "two"),
        ]);
        let content = sent["messages"][2]["content"].as_array().unwrap();
        let kinds: Vec<&str> = content
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["tool_result", "tool_result", "text"]);
        assert_eq!(content[1]["tool_use_id"], "b");
        assert_eq!(sent["messages"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn empty_messages_and_odd_attachments_never_make_invalid_blocks() {
        let parts = Message::User {
            content: UserContent::Parts(vec![
                ContentPart::Text {
                    text: String::new(),
                },
                ContentPart::ImageUrl {
                    image_url: workmate_protocol::ImageUrl {
                        url: "https://example.com/cat.png".into(),
                    },
                },
                ContentPart::ImageUrl {
                    image_url: workmate_protocol::ImageUrl {
                        url: "data:,plain".into(),
                    },
                },
                ContentPart::File {
                    file: workmate_protocol::FileData {
                        filename: "notes.txt".into(),
                        file_data: "data:text/plain;base64,aGk=".into(),
                        text: None,
                    },
                },
            ]),
            ts: 1,
            author: None,
            display: None,
        };
        let sent = body(&[
            Message::System {
                content: " ".into(),
            },
            user(""),
            parts,
            Message::Assistant {
                content: String::new(),
                ts: 1,
                tool_calls: Vec::new(),
                reasoning: Some("hidden".into()),
                usage: None,
                provider_state: Box::new(ProviderState::default()),
            },
        ]);
        assert!(
            sent.get("system").is_none(),
            "no empty system block: {sent}"
        );
        let messages = sent["messages"].as_array().unwrap();
        assert_eq!(
            messages.len(),
            1,
            "empty user and assistant messages dropped: {sent}"
        );
        let content = messages[0]["content"].as_array().unwrap();
        assert_eq!(
            content[0]["source"],
            json!({"type": "url", "url": "https://example.com/cat.png"})
        );
        assert_eq!(content[1]["type"], "text");
        assert!(content[2]["text"].as_str().unwrap().contains("notes.txt"));
        assert_eq!(content[2]["cache_control"], json!({"type": "ephemeral"}));
    }

    #[test]
    fn data_urls_are_split_only_when_base64() {
        assert_eq!(
            base64_data_url("data:image/png;base64,AAAA"),
            Some(("image/png", "AAAA"))
        );
        assert_eq!(
            base64_data_url("data:application/pdf;name=a.pdf;base64,JVBE"),
            Some(("application/pdf", "JVBE"))
        );
        assert_eq!(base64_data_url("data:image/png,AAAA"), None);
        assert_eq!(base64_data_url("data:;base64,AAAA"), None);
        assert_eq!(base64_data_url("https://x/y.png"), None);
    }
}
