//! The Gemini `generateContent` wire format: what is sent and what each streamed chunk holds.
//!
//! Invariant: every field of a response type is optional or defaulted, so a chunk missing parts
//! the client does not need still decodes; only JSON that is not a response at all is an error.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of `streamGenerateContent`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerateContentRequest {
    pub(crate) contents: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system_instruction: Option<Content>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<Tool>,
    pub(crate) generation_config: GenerationConfig,
}

/// One turn of the conversation (`role` is `user` or `model`; the system instruction has none).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Content {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) parts: Vec<Part>,
}

/// One part of a turn. Gemini's `Part` is a one-of (`text`, `inlineData`, `functionCall`,
/// `functionResponse`, …) plus the `thought` flag and `thoughtSignature` beside it.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Part {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) thought: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) inline_data: Option<InlineData>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) function_call: Option<FunctionCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) function_response: Option<FunctionResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) thought_signature: Option<String>,
}

impl Part {
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }
}

/// Base64 bytes with their media type.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InlineData {
    pub(crate) mime_type: String,
    pub(crate) data: String,
}

/// A call the model made. Gemini sends it whole, in one part, without an id the client can rely
/// on, so ids are minted on our side.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct FunctionCall {
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) args: Value,
}

/// A tool result, matched to its call by the function name.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FunctionResponse {
    pub(crate) name: String,
    pub(crate) response: Value,
}

/// The tools offered.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tool {
    pub(crate) function_declarations: Vec<FunctionDeclaration>,
}

/// One tool: its name, description and (sanitized) parameter schema.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionDeclaration {
    pub(crate) name: String,
    pub(crate) description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parameters: Option<Value>,
}

/// Output limits and thinking.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerationConfig {
    pub(crate) max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thinking_config: Option<ThinkingConfig>,
}

/// Asks a thinking model to stream its thought summaries.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThinkingConfig {
    pub(crate) include_thoughts: bool,
}

/// One streamed chunk (`data:` of the SSE stream).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct GenerateContentResponse {
    #[serde(deserialize_with = "null_as_default")]
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) usage_metadata: Option<UsageMetadata>,
    pub(crate) prompt_feedback: Option<PromptFeedback>,
    pub(crate) error: Option<ApiError>,
}

/// One candidate reply; the client reads only the first.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Candidate {
    pub(crate) content: Option<Content>,
    pub(crate) finish_reason: Option<String>,
}

/// Why the prompt itself was refused.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PromptFeedback {
    pub(crate) block_reason: Option<String>,
}

/// Token counts so far (each chunk repeats the running totals).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct UsageMetadata {
    pub(crate) prompt_token_count: u64,
    pub(crate) candidates_token_count: u64,
    pub(crate) cached_content_token_count: u64,
    pub(crate) thoughts_token_count: u64,
}

/// A Google API error (`{"error": {"code", "message", "status"}}`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ApiError {
    pub(crate) code: Option<u16>,
    #[serde(deserialize_with = "null_as_default")]
    pub(crate) message: String,
    #[serde(deserialize_with = "null_as_default")]
    pub(crate) status: String,
}

/// Reads `null` as the type's default (Google's JSON sometimes sends `null` for empty lists).
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
