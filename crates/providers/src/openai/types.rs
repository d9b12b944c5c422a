//! The Chat Completions wire format: the request body we send and the stream chunks we read.
//!
//! Invariant: request types borrow from the canonical history and carry only fields the wire
//! format defines, so nothing display-only or owned by another provider can be serialized by
//! accident; response types accept every field as optional (compatible servers omit or null
//! fields freely), so only a chunk that is not JSON at all fails to decode.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    pub(super) model: &'a str,
    pub(super) messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<WireTool<'a>>,
    pub(super) stream: bool,
    pub(super) stream_options: StreamOptions,
}

/// Asks for a final chunk with the token usage.
#[derive(Debug, Serialize)]
pub(super) struct StreamOptions {
    pub(super) include_usage: bool,
}

/// One message of the conversation, as Chat Completions takes it.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(super) enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: WireUserContent<'a>,
    },
    Assistant {
        /// `null` when the reply is only tool calls.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A user message's content: a string, or parts when there are attachments.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum WireUserContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
}

/// One part of a user message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum WirePart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: WireUrl<'a> },
    File { file: WireFile<'a> },
}

#[derive(Debug, Serialize)]
pub(super) struct WireUrl<'a> {
    pub(super) url: &'a str,
}

#[derive(Debug, Serialize)]
pub(super) struct WireFile<'a> {
    pub(super) filename: &'a str,
    pub(super) file_data: &'a str,
}

/// A tool call the assistant made earlier, replayed.
#[derive(Debug, Serialize)]
pub(super) struct WireToolCall<'a> {
    pub(super) id: &'a str,
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) function: WireFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
pub(super) struct WireFunctionCall<'a> {
    pub(super) name: &'a str,
    /// JSON text, as the model wrote it.
    pub(super) arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Serialize)]
pub(super) struct WireTool<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
pub(super) struct WireFunction<'a> {
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    pub(super) parameters: &'a Value,
}

/// One `data:` payload of the stream.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Chunk {
    #[serde(default)]
    pub(super) choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub(super) usage: Option<Usage>,
    #[serde(default)]
    pub(super) error: Option<ChunkError>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Choice {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(default)]
    pub(super) delta: Option<Delta>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Delta {
    /// A string; some servers send an array of `{type:"text", text}` parts instead.
    #[serde(default)]
    pub(super) content: Option<Value>,
    /// DeepSeek, vLLM, Qwen and most gateways.
    #[serde(default)]
    pub(super) reasoning_content: Option<Value>,
    /// OpenRouter, Ollama.
    #[serde(default)]
    pub(super) reasoning: Option<Value>,
    #[serde(default)]
    pub(super) tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ToolCallDelta {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct FunctionDelta {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Usage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct PromptTokensDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

/// An error reported inside the stream (`{"error": {...}}`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ChunkError {
    #[serde(default)]
    pub(super) message: Option<String>,
    #[serde(default, rename = "type")]
    pub(super) kind: Option<String>,
    /// A string (`"rate_limit_exceeded"`) or a number (`429`), depending on the server.
    #[serde(default)]
    pub(super) code: Option<Value>,
}

/// The text of a `content` or reasoning field: a string, or the text of its parts.
pub(super) fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(text) => Some(text.as_str()),
                Value::Object(map) => map.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect(),
        _ => String::new(),
    }
}
