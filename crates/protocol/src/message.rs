//! The canonical conversation history: what is persisted per session and what every provider
//! converts from.
//!
//! Everything underscore-prefixed (`_display`, `_openai`, `_anthropic`, `_gemini`) is display- or
//! replay-only: providers never send `_display`, and only the owning provider replays its own
//! sidecar. Notices are persisted for display and never sent to a model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::{Actor, TokenUsage, ToolCall};
use crate::ids::ToolCallId;

/// One entry of a session's history. The `role` tag names the kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// The instructions; the first message of a history.
    System {
        /// The instruction text.
        content: String,
    },
    /// A person's message.
    User {
        /// Text, or parts when the message has attachments.
        content: UserContent,
        /// When it was written, in Unix milliseconds.
        ts: i64,
        /// Who wrote it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        author: Option<Actor>,
        /// A line shown instead of `content` (display-only).
        #[serde(rename = "_display", default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    /// A model reply.
    Assistant {
        /// The answer text (may be empty when the reply is only tool calls).
        content: String,
        /// When it finished, in Unix milliseconds.
        ts: i64,
        /// The tool calls requested; each gets exactly one `tool` message.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The reasoning text, when the model exposes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// Tokens spent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
        /// Provider-private replay data, serialized as the `_openai`, `_anthropic` and `_gemini`
        /// fields. Boxed because it is large and usually empty.
        #[serde(flatten)]
        provider_state: Box<ProviderState>,
    },
    /// The result of one tool call.
    Tool {
        /// The call answered.
        tool_call_id: ToolCallId,
        /// The result the model sees (text, or JSON text).
        content: String,
        /// When it finished, in Unix milliseconds.
        ts: i64,
        /// The tool's display-only sidecar, removed from what the model sees.
        #[serde(rename = "_display", default, skip_serializing_if = "Option::is_none")]
        display: Option<Value>,
    },
    /// A display-only line (error, interruption, model switch, …); persisted, never sent.
    Notice {
        /// What the notice reports.
        kind: NoticeKind,
        /// The text shown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// When it happened, in Unix milliseconds.
        ts: i64,
    },
}

impl Message {
    /// The wire role, e.g. `"assistant"`.
    pub fn role(&self) -> &'static str {
        match self {
            Self::System { .. } => "system",
            Self::User { .. } => "user",
            Self::Assistant { .. } => "assistant",
            Self::Tool { .. } => "tool",
            Self::Notice { .. } => "notice",
        }
    }

    /// Whether this is a display-only notice, which never reaches a model.
    pub fn is_notice(&self) -> bool {
        matches!(self, Self::Notice { .. })
    }
}

/// Provider-private sidecars of an assistant message (Gemini thought signatures, Anthropic
/// thinking blocks, OpenAI Responses encrypted reasoning items). Only the owning provider replays
/// its own; every other provider drops them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderState {
    /// OpenAI replay data.
    #[serde(rename = "_openai", default, skip_serializing_if = "Option::is_none")]
    pub openai: Option<Value>,
    /// Anthropic replay data.
    #[serde(
        rename = "_anthropic",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub anthropic: Option<Value>,
    /// Gemini replay data.
    #[serde(rename = "_gemini", default, skip_serializing_if = "Option::is_none")]
    pub gemini: Option<Value>,
}

impl ProviderState {
    /// Whether no provider left anything.
    pub fn is_empty(&self) -> bool {
        self.openai.is_none() && self.anthropic.is_none() && self.gemini.is_none()
    }
}

/// The content of a user message: plain text, or parts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum UserContent {
    /// Plain text.
    Text(String),
    /// Text, image and file parts, in order.
    Parts(Vec<ContentPart>),
}

impl From<String> for UserContent {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for UserContent {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// One part of a user message. Text attachments are inlined as a text part
/// `"[Attached file: <name>]\n<body>"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    ImageUrl {
        /// Where the image is.
        image_url: ImageUrl,
    },
    /// A file (PDF).
    File {
        /// The file.
        file: FileData,
    },
}

/// An image reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImageUrl {
    /// A data URL (`data:image/png;base64,…`).
    pub url: String,
}

/// An inline file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileData {
    /// The file name.
    pub filename: String,
    /// A data URL (`data:application/pdf;base64,…`).
    pub file_data: String,
    /// The document's text as workmate extracted it when the message arrived (capped), sent
    /// instead of the file to a model that cannot read it; absent when none could be extracted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What a notice reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NoticeKind {
    /// A turn failed.
    Error,
    /// A turn was stopped.
    Interrupted,
    /// The model changed.
    ModelSwitch,
    /// The persona changed.
    PersonaSwitch,
    /// The history was compacted or trimmed.
    Compacted,
    /// A memory was saved, changed or deleted.
    MemorySaved,
    /// An MCP server failed.
    McpError,
    /// workmate restarted in the middle of the turn and took it up again.
    Restarted,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn user_content_is_text_or_parts() {
        let text: Message =
            serde_json::from_value(json!({"role": "user", "content": "hello", "ts": 5})).unwrap();
        assert!(matches!(
            &text,
            Message::User { content: UserContent::Text(t), .. } if t == "hello"
        ));
        let parts = json!({"role": "user", "ts": 6, "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,AA=="}}
        ]});
        let msg: Message = serde_json::from_value(parts.clone()).unwrap();
        let Message::User {
            content: UserContent::Parts(p),
            ..
        } = &msg
        else {
            panic!("expected parts, got {msg:?}");
        };
        assert_eq!(p.len(), 3);
        assert!(
            matches!(&p[1], ContentPart::ImageUrl { image_url } if image_url.url.starts_with("data:"))
        );
        assert_eq!(serde_json::to_value(&msg).unwrap(), parts);
    }

    #[test]
    fn display_sidecars_are_underscored() {
        let tool = Message::Tool {
            tool_call_id: "call_1".into(),
            content: "3 mails".into(),
            ts: 9,
            display: Some(json!({"hidden_by_filters": 2})),
        };
        let value = serde_json::to_value(&tool).unwrap();
        assert_eq!(value["_display"]["hidden_by_filters"], 2);
        assert!(value.get("display").is_none());
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), tool);

        let user = Message::User {
            content: "/standup".into(),
            ts: 1,
            author: None,
            display: Some("Run skill: standup".into()),
        };
        assert_eq!(
            serde_json::to_value(&user).unwrap()["_display"],
            "Run skill: standup"
        );
    }

    #[test]
    fn assistant_sidecars_flatten_and_round_trip() {
        let msg = Message::Assistant {
            content: String::new(),
            ts: 2,
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "README.md"}),
            }],
            reasoning: None,
            usage: Some(TokenUsage::default()),
            provider_state: Box::new(ProviderState {
                anthropic: Some(json!([{"type": "thinking", "signature": "sig"}])),
                ..ProviderState::default()
            }),
        };
        let value = serde_json::to_value(&msg).unwrap();
        assert_eq!(value["role"], "assistant");
        assert_eq!(value["_anthropic"][0]["signature"], "sig");
        assert!(value.get("_openai").is_none());
        assert!(value.get("provider_state").is_none());
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), msg);

        let bare: Message =
            serde_json::from_value(json!({"role": "assistant", "content": "ok", "ts": 3})).unwrap();
        let Message::Assistant {
            tool_calls,
            provider_state,
            ..
        } = &bare
        else {
            panic!("expected assistant, got {bare:?}");
        };
        assert!(tool_calls.is_empty() && provider_state.is_empty());
        assert_eq!(bare.role(), "assistant");
    }

    #[test]
    fn notices_and_unknown_roles() {
        let notice: Message = serde_json::from_value(
            json!({"role": "notice", "kind": "model_switch", "text": "Now using x", "ts": 4}),
        )
        .unwrap();
        assert!(notice.is_notice());
        assert_eq!(notice.role(), "notice");
        assert!(
            serde_json::from_value::<Message>(json!({"role": "developer", "content": "x"}))
                .is_err()
        );
        assert!(
            serde_json::from_value::<ContentPart>(json!({"type": "audio", "data": "x"})).is_err()
        );
    }
}
