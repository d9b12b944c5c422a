//! The Anthropic Messages wire format: the request body we send, the stream events we read, and
//! the replay state we keep in an assistant message's `_anthropic` sidecar.
//!
//! Invariant: these are plain data. Every server-side enum has a catch-all variant, so an event,
//! block or delta type Anthropic adds later is skipped instead of failing the call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `anthropic-version` header every call sends.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// The output ceiling sent with every call (spec §6.6: 32,000 when the caller sets none).
pub(crate) const MAX_TOKENS: u32 = 32_000;

/// `POST /v1/messages` with `stream: true`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct MessagesRequest {
    pub(crate) model: String,
    pub(crate) max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) system: Vec<Block>,
    pub(crate) messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<WireTool>,
    pub(crate) stream: bool,
}

/// Who speaks a wire message; Anthropic has only these two (the system text goes to `system`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Role {
    User,
    Assistant,
}

/// One message of the `messages` array.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct WireMessage {
    pub(crate) role: Role,
    pub(crate) content: Vec<Block>,
}

/// A content block, with the optional prompt-cache breakpoint every block type accepts except
/// thinking.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Block {
    #[serde(flatten)]
    pub(crate) body: BlockBody,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cache_control: Option<CacheControl>,
}

impl Block {
    pub(crate) fn new(body: BlockBody) -> Self {
        Self {
            body,
            cache_control: None,
        }
    }

    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self::new(BlockBody::Text { text: text.into() })
    }

    /// Whether a cache breakpoint may sit on this block (Anthropic refuses one on thinking).
    pub(crate) fn cacheable(&self) -> bool {
        !matches!(
            self.body,
            BlockBody::Thinking { .. } | BlockBody::RedactedThinking { .. }
        )
    }

    pub(crate) fn is_tool_result(&self) -> bool {
        matches!(self.body, BlockBody::ToolResult { .. })
    }
}

/// What a block holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockBody {
    Text {
        text: String,
    },
    Image {
        source: Source,
    },
    Document {
        source: Source,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
}

/// Where an image or document comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Source {
    Base64 { media_type: String, data: String },
    Url { url: String },
}

/// `{"type": "ephemeral"}`: a prompt-cache breakpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

impl CacheControl {
    pub(crate) const EPHEMERAL: Self = Self { kind: "ephemeral" };
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct WireTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
}

/// One decoded server-sent event (its `data`, tagged by `type`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ServerEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Unknown,
}

/// The `message` of `message_start` (only its usage matters: content arrives as blocks).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct StartMessage {
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

/// Token counts; every field may be absent or `null`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) output_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: Option<u64>,
}

/// The block a `content_block_start` opens.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    /// Server tools, citations' sources and anything newer: not ours to surface.
    #[serde(other)]
    Other,
}

/// A piece of an open block.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

/// The `delta` of `message_delta`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct MessageDeltaBody {
    #[serde(default)]
    pub(crate) stop_reason: Option<String>,
}

/// The `error` of an `error` event (and of an error response body).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct WireError {
    #[serde(rename = "type", default)]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) message: String,
}

/// A thinking block kept for replay: the signature is what lets Anthropic verify it next call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ThinkingBlock {
    Thinking { thinking: String, signature: String },
    RedactedThinking { data: String },
}

impl From<ThinkingBlock> for Block {
    fn from(block: ThinkingBlock) -> Self {
        Block::new(match block {
            ThinkingBlock::Thinking {
                thinking,
                signature,
            } => BlockBody::Thinking {
                thinking,
                signature,
            },
            ThinkingBlock::RedactedThinking { data } => BlockBody::RedactedThinking { data },
        })
    }
}

/// The `_anthropic` sidecar of an assistant message:
/// `{"thinking_blocks": [{"type": "thinking", "thinking": "…", "signature": "…"},
/// {"type": "redacted_thinking", "data": "…"}]}`, in the order the model produced them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReplayState {
    #[serde(default)]
    pub(crate) thinking_blocks: Vec<ThinkingBlock>,
}

impl ReplayState {
    /// The sidecar as stored, or `None` when there is nothing to replay.
    pub(crate) fn to_value(&self) -> Option<Value> {
        if self.thinking_blocks.is_empty() {
            return None;
        }
        serde_json::to_value(self).ok()
    }

    /// The replayable blocks of a stored sidecar. Lenient: a bare array of blocks is accepted
    /// too, and entries that are not a signed thinking block or a redacted one are dropped (an
    /// unsigned block would only get the whole request refused).
    pub(crate) fn from_value(value: &Value) -> Self {
        let entries = match value {
            Value::Array(entries) => entries.as_slice(),
            other => other
                .get("thinking_blocks")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice),
        };
        let thinking_blocks = entries
            .iter()
            .filter_map(|entry| serde_json::from_value::<ThinkingBlock>(entry.clone()).ok())
            .filter(|block| match block {
                ThinkingBlock::Thinking { signature, .. } => !signature.is_empty(),
                ThinkingBlock::RedactedThinking { data } => !data.is_empty(),
            })
            .collect();
        Self { thinking_blocks }
    }
}
