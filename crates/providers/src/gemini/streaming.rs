//! Folding Gemini's streamed `GenerateContentResponse` chunks into deltas and one final turn.
//!
//! Invariants: every function call gets an id no other call of this process has had (Gemini
//! sends none the client can rely on); a thought signature is kept with the call or text it came
//! with, so the next request can replay it; a stream that ends without a finish reason is an
//! error, never a silently truncated turn; and no server input can make this code panic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use workmate_protocol::{ProviderState, TokenUsage, ToolCall};

use super::request::{CALL_SIGNATURES, TEXT_SIGNATURE};
use super::types::{ApiError, GenerateContentResponse, UsageMetadata};
use crate::errors::friendly_error;
use crate::http::error_from_status;
use crate::{AssistantTurn, FinishReason, ProviderError, ProviderErrorKind, StreamEvent};

/// Mints tool-call ids: `gemini_<Unix ms>_<n>`. The counter makes them unique within the process,
/// the clock across restarts (a resumed session keeps its old ids in its history).
#[derive(Debug, Default)]
pub(crate) struct CallIds {
    next: AtomicU64,
}

impl CallIds {
    pub(crate) fn mint(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("gemini_{ms}_{n}")
    }
}

/// The state of one streamed reply.
#[derive(Debug)]
pub(crate) struct Reply<'a> {
    /// The routed model id, for usage and error messages.
    model: &'a str,
    ids: &'a CallIds,
    text: String,
    reasoning: String,
    calls: Vec<ToolCall>,
    call_signatures: Map<String, Value>,
    text_signature: Option<String>,
    finish: Option<FinishReason>,
    usage: Option<UsageMetadata>,
}

impl<'a> Reply<'a> {
    pub(crate) fn new(model: &'a str, ids: &'a CallIds) -> Self {
        Self {
            model,
            ids,
            text: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            call_signatures: Map::new(),
            text_signature: None,
            finish: None,
            usage: None,
        }
    }

    /// Takes the `data` of one SSE event; returns the deltas it carried, or the error it reported.
    pub(crate) fn push(&mut self, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| self.malformed(&e))?;
        // Without `alt=sse` Gemini streams one JSON array; accept its elements too.
        let chunks = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        let mut events = Vec::new();
        for chunk in chunks {
            let chunk: GenerateContentResponse =
                serde_json::from_value(chunk).map_err(|e| self.malformed(&e))?;
            self.absorb(chunk, &mut events)?;
        }
        Ok(events)
    }

    fn absorb(
        &mut self,
        chunk: GenerateContentResponse,
        events: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(error) = chunk.error {
            return Err(stream_error(self.model, &error));
        }
        if let Some(usage) = chunk.usage_metadata {
            self.usage = Some(usage);
        }
        if chunk.prompt_feedback.and_then(|f| f.block_reason).is_some() {
            self.finish = Some(FinishReason::ContentFilter);
        }
        let Some(candidate) = chunk.candidates.into_iter().next() else {
            return Ok(());
        };
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            if let Some(call) = part.function_call {
                let id = self.ids.mint();
                if let Some(signature) = part.thought_signature {
                    self.call_signatures
                        .insert(id.clone(), Value::String(signature));
                }
                let arguments = match call.args {
                    Value::Object(map) => Value::Object(map),
                    Value::Null => Value::Object(Map::new()),
                    other => json!({ ToolCall::RAW_KEY: other.to_string() }),
                };
                self.calls.push(ToolCall {
                    id: id.into(),
                    name: call.name,
                    arguments,
                });
                continue;
            }
            if let Some(signature) = part.thought_signature {
                self.text_signature = Some(signature);
            }
            match part.text {
                Some(text) if text.is_empty() => {}
                Some(text) if part.thought == Some(true) => {
                    self.reasoning.push_str(&text);
                    events.push(StreamEvent::ReasoningDelta(text));
                }
                Some(text) => {
                    self.text.push_str(&text);
                    events.push(StreamEvent::TextDelta(text));
                }
                None => {}
            }
        }
        if let Some(reason) = candidate.finish_reason.filter(|r| !r.is_empty()) {
            self.finish = Some(match reason.as_str() {
                "MAX_TOKENS" => FinishReason::Length,
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
                | "IMAGE_SAFETY" => FinishReason::ContentFilter,
                _ => FinishReason::Stop,
            });
        }
        Ok(())
    }

    /// The whole reply, once the stream has ended.
    pub(crate) fn finish(self) -> Result<AssistantTurn, ProviderError> {
        let Some(mut finish_reason) = self.finish else {
            return Err(ProviderError::new(
                ProviderErrorKind::Unavailable,
                format!(
                    "{}: the stream ended before the model finished its reply",
                    self.model
                ),
            ));
        };
        if finish_reason == FinishReason::Stop && !self.calls.is_empty() {
            finish_reason = FinishReason::ToolCalls;
        }
        let mut state = Map::new();
        if !self.call_signatures.is_empty() {
            state.insert(CALL_SIGNATURES.into(), Value::Object(self.call_signatures));
        }
        if let Some(signature) = self.text_signature {
            state.insert(TEXT_SIGNATURE.into(), Value::String(signature));
        }
        let usage = self.usage.map(|u| TokenUsage {
            model: self.model.to_owned(),
            input: u
                .prompt_token_count
                .saturating_sub(u.cached_content_token_count),
            output: u
                .candidates_token_count
                .saturating_add(u.thoughts_token_count),
            cache_read: u.cached_content_token_count,
            cache_write: 0,
        });
        Ok(AssistantTurn {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            tool_calls: self.calls,
            finish_reason,
            usage,
            provider_state: ProviderState {
                gemini: (!state.is_empty()).then_some(Value::Object(state)),
                ..ProviderState::default()
            },
        })
    }

    fn malformed(&self, error: &serde_json::Error) -> ProviderError {
        ProviderError::new(
            ProviderErrorKind::Unavailable,
            format!(
                "{}: the model gateway sent a malformed stream chunk: {error}",
                self.model
            ),
        )
    }
}

/// An `error` object inside the stream, classified like the HTTP status its gRPC status stands
/// for, so the markers (quota, access, context overflow) decide the same way as for a response.
pub(crate) fn stream_error(model: &str, error: &ApiError) -> ProviderError {
    let status = match error.status.as_str() {
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE" => 400,
        "UNAUTHENTICATED" => 401,
        "PERMISSION_DENIED" => 403,
        "NOT_FOUND" => 404,
        "RESOURCE_EXHAUSTED" => 429,
        "UNAVAILABLE" | "INTERNAL" | "DEADLINE_EXCEEDED" | "ABORTED" => 503,
        _ => error.code.unwrap_or(500),
    };
    let kind = error_from_status(model, status, &error.message).kind;
    let label = if error.status.is_empty() {
        "error"
    } else {
        error.status.as_str()
    };
    let message = friendly_error(model, &error.message).unwrap_or_else(|| {
        let detail: String = error.message.chars().take(500).collect();
        format!("{model}: {label}: {detail}")
    });
    ProviderError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(chunks: &[&str]) -> (Vec<StreamEvent>, Result<AssistantTurn, ProviderError>) {
        let ids = CallIds::default();
        let mut reply = Reply::new("g:m", &ids);
        let mut events = Vec::new();
        for chunk in chunks {
            match reply.push(chunk) {
                Ok(more) => events.extend(more),
                Err(error) => return (events, Err(error)),
            }
        }
        (events, reply.finish())
    }

    #[test]
    fn finish_reasons_map() {
        for (reason, expected) in [
            ("STOP", FinishReason::Stop),
            ("MAX_TOKENS", FinishReason::Length),
            ("SAFETY", FinishReason::ContentFilter),
            ("RECITATION", FinishReason::ContentFilter),
            ("BLOCKLIST", FinishReason::ContentFilter),
            ("OTHER", FinishReason::Stop),
        ] {
            let chunk = format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"text":"x"}}]}},"finishReason":"{reason}"}}]}}"#
            );
            assert_eq!(
                play(&[&chunk]).1.unwrap().finish_reason,
                expected,
                "{reason}"
            );
        }
        let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#;
        assert_eq!(
            play(&[blocked]).1.unwrap().finish_reason,
            FinishReason::ContentFilter
        );
    }

    #[test]
    fn signatures_are_kept_per_call_and_for_the_text() {
        let (_, turn) = play(&[
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"a","args":{"x":1}},"thoughtSignature":"s1"},{"functionCall":{"name":"b"}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"st"}]},"finishReason":"STOP"}]}"#,
        ]);
        let turn = turn.unwrap();
        assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
        let [a, b] = &turn.tool_calls[..] else {
            panic!("two calls expected: {turn:?}")
        };
        assert_ne!(a.id, b.id);
        assert_eq!(b.arguments, json!({}));
        let state = turn.provider_state.gemini.unwrap();
        assert_eq!(state[CALL_SIGNATURES], json!({ a.id.as_str(): "s1" }));
        assert_eq!(state[TEXT_SIGNATURE], "st");
        assert!(turn.provider_state.openai.is_none());
    }

    #[test]
    fn malformed_or_truncated_streams_are_errors() {
        let (_, result) = play(&["{not json"]);
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Unavailable);
        let (_, result) = play(&[r#"{"candidates":"nope"}"#]);
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Unavailable);
        let (events, result) =
            play(&[r#"{"candidates":[{"content":{"parts":[{"text":"half"}]}}]}"#]);
        assert_eq!(events, vec![StreamEvent::TextDelta("half".into())]);
        assert!(result.unwrap_err().message.contains("ended before"));
        let (_, result) = play(&[
            r#"{"candidates":null,"usageMetadata":null}"#,
            r#"[{"candidates":[{"finishReason":"STOP","content":{"parts":null}}]}]"#,
        ]);
        assert_eq!(result.unwrap().text, "");
    }

    #[test]
    fn stream_errors_are_classified() {
        let kind = |status: &str, message: &str| {
            stream_error(
                "g:m",
                &ApiError {
                    code: None,
                    message: message.into(),
                    status: status.into(),
                },
            )
            .kind
        };
        assert_eq!(
            kind("UNAVAILABLE", "overloaded"),
            ProviderErrorKind::Unavailable
        );
        assert_eq!(
            kind("RESOURCE_EXHAUSTED", "slow down"),
            ProviderErrorKind::RateLimited
        );
        assert_eq!(
            kind("RESOURCE_EXHAUSTED", "You exceeded your current quota"),
            ProviderErrorKind::Quota
        );
        assert_eq!(kind("PERMISSION_DENIED", "no"), ProviderErrorKind::Access);
        assert_eq!(kind("UNAUTHENTICATED", "no"), ProviderErrorKind::Access);
        assert_eq!(
            kind("INVALID_ARGUMENT", "bad field"),
            ProviderErrorKind::BadRequest
        );
        assert_eq!(
            kind(
                "INVALID_ARGUMENT",
                "The input token count (2000000) exceeds the maximum number of tokens allowed (1048576)."
            ),
            ProviderErrorKind::ContextOverflow
        );
        assert_eq!(kind("", "?"), ProviderErrorKind::Unavailable);
    }

    #[test]
    fn call_ids_differ_across_replies() {
        let ids = CallIds::default();
        assert_ne!(ids.mint(), ids.mint());
    }
}
