//! Stream chunks → deltas and the finished turn.
//!
//! Invariants: every text and reasoning delta is forwarded as it arrives and also kept, so the
//! finished turn's text is exactly what was streamed (less any salvaged tool-call text);
//! tool-call fragments are joined per call and parsed only once the stream is complete; a chunk
//! that is not JSON, or that carries an `error` object, ends the stream with an error instead of
//! being skipped; a stream cut off before `[DONE]` or a finish reason is an error, never a
//! silently short answer.

use serde_json::Value;
use workmate_protocol::{TokenUsage, ToolCall, ToolSpec};

use super::salvage;
use super::types::{Chunk, ChunkError, ToolCallDelta, Usage, text_of};
use crate::http::SseEvent;
use crate::{AssistantTurn, FinishReason, ProviderError, ProviderErrorKind, StreamEvent};

/// The longest piece of server text quoted in an error message.
const QUOTE_LIMIT: usize = 300;

/// The state of one streamed reply.
#[derive(Debug)]
pub(super) struct Accumulator {
    /// The model asked for, named in errors and usage.
    model: String,
    text: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<TokenUsage>,
    done: bool,
}

/// A tool call whose fragments are still arriving.
#[derive(Debug)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

impl Accumulator {
    pub(super) fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            text: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            finish: None,
            usage: None,
            done: false,
        }
    }

    /// Whether the server sent `[DONE]`; nothing after it is read.
    pub(super) fn is_done(&self) -> bool {
        self.done
    }

    /// Takes one server-sent event; returns the deltas to forward.
    pub(super) fn push(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(_) if event.event == "error" => {
                return Err(stream_error(
                    &self.model,
                    &ChunkError {
                        message: Some(data.to_owned()),
                        ..ChunkError::default()
                    },
                ));
            }
            Err(error) => {
                return Err(ProviderError::new(
                    ProviderErrorKind::Other,
                    format!(
                        "{}: the model gateway sent a malformed stream chunk ({error}): {}",
                        self.model,
                        quote(data)
                    ),
                ));
            }
        };
        if let Some(error) = &chunk.error {
            return Err(stream_error(&self.model, error));
        }
        if event.event == "error" {
            return Err(stream_error(
                &self.model,
                &ChunkError {
                    message: Some(data.to_owned()),
                    ..ChunkError::default()
                },
            ));
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(self.token_usage(usage));
        }
        let mut events = Vec::new();
        // Only the first choice is ours: we never ask for `n > 1`.
        for choice in chunk
            .choices
            .into_iter()
            .flatten()
            .filter(|c| c.index.unwrap_or(0) == 0)
        {
            if let Some(reason) = choice.finish_reason.as_deref() {
                self.finish = Some(finish_reason(reason));
            }
            let Some(delta) = choice.delta else { continue };
            let reasoning =
                text_of(delta.reasoning_content.as_ref()) + &text_of(delta.reasoning.as_ref());
            if !reasoning.is_empty() {
                self.reasoning.push_str(&reasoning);
                events.push(StreamEvent::ReasoningDelta(reasoning));
            }
            let text = text_of(delta.content.as_ref());
            if !text.is_empty() {
                self.text.push_str(&text);
                events.push(StreamEvent::TextDelta(text));
            }
            for call in delta.tool_calls.into_iter().flatten() {
                self.merge(call);
            }
        }
        Ok(events)
    }

    /// Adds one tool-call fragment to its call. Calls are matched by `index`; a fragment with a
    /// new id at a used index starts another call (some servers number parallel calls all 0),
    /// and a fragment without an index continues the call with its id, or the last one.
    fn merge(&mut self, delta: ToolCallDelta) {
        let id = delta.id.filter(|id| !id.is_empty());
        let found = match delta.index {
            Some(index) => self
                .calls
                .iter()
                .rposition(|c| c.index == index)
                .filter(|&at| {
                    let known = &self.calls[at].id;
                    id.as_ref().is_none_or(|id| known.is_empty() || known == id)
                }),
            None => match &id {
                Some(id) => self.calls.iter().rposition(|c| c.id == *id),
                None => self.calls.len().checked_sub(1),
            },
        };
        let at = found.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index: delta.index.unwrap_or(self.calls.len() as u64),
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[at];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(function) = delta.function {
            // The name arrives whole (some servers repeat it in every fragment); arguments in
            // pieces.
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                call.name = name;
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
    }

    fn token_usage(&self, usage: &Usage) -> TokenUsage {
        let prompt = usage.prompt_tokens.unwrap_or(0);
        let cached = usage
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0)
            .min(prompt);
        TokenUsage {
            model: self.model.clone(),
            input: prompt - cached,
            output: usage.completion_tokens.unwrap_or(0),
            cache_read: cached,
            cache_write: 0,
        }
    }

    /// The finished turn, once the stream has ended. `tools` are the tools offered, for
    /// recovering calls a backend wrote as text.
    pub(super) fn finish(self, tools: &[ToolSpec]) -> Result<AssistantTurn, ProviderError> {
        if !self.done && self.finish.is_none() {
            return Err(ProviderError::new(
                ProviderErrorKind::Unavailable,
                format!(
                    "{}: the stream ended before the model finished its reply",
                    self.model
                ),
            ));
        }
        let mut text = self.text;
        let mut tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{n}")
                } else {
                    call.id
                }
                .into(),
                name: call.name,
                arguments: ToolCall::parse_arguments(&call.arguments),
            })
            .collect();
        if tool_calls.is_empty()
            && !tools.is_empty()
            && let Some((calls, rest)) = salvage::salvage(&text, tools)
        {
            tracing::debug!(model = %self.model, calls = calls.len(), "Tool calls salvaged from text.");
            tool_calls = calls;
            text = rest;
        }
        let mut finish_reason = self.finish.unwrap_or_default();
        if !tool_calls.is_empty() && finish_reason == FinishReason::Stop {
            finish_reason = FinishReason::ToolCalls;
        }
        Ok(AssistantTurn {
            text,
            reasoning: Some(self.reasoning).filter(|r| !r.is_empty()),
            tool_calls,
            finish_reason,
            usage: self.usage,
            provider_state: Default::default(),
        })
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" | "max_tokens" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// The error an in-stream `error` object stands for; its kind is read from the numeric code,
/// then from the markers in its type, code and message.
fn stream_error(model: &str, error: &ChunkError) -> ProviderError {
    let message = error.message.as_deref().unwrap_or("unknown error");
    let code = match &error.code {
        Some(Value::String(code)) => code.clone(),
        Some(Value::Number(code)) => code.to_string(),
        _ => String::new(),
    };
    let label = format!("{} {code}", error.kind.as_deref().unwrap_or_default()).to_lowercase();
    let all = format!("{label} {message}").to_lowercase();
    let has = |text: &str, markers: &[&str]| markers.iter().any(|m| text.contains(m));
    let friendly = crate::friendly_error(model, &all);
    let kind = match code.parse::<u16>().ok() {
        _ if crate::is_quota(&all) => ProviderErrorKind::Quota,
        _ if friendly.is_some() => ProviderErrorKind::Access,
        _ if crate::is_context_overflow(&all) => ProviderErrorKind::ContextOverflow,
        Some(429) => ProviderErrorKind::RateLimited,
        Some(401 | 403) => ProviderErrorKind::Access,
        Some(400..=499) => ProviderErrorKind::BadRequest,
        Some(500..=599) => ProviderErrorKind::Unavailable,
        _ if has(&all, &["rate_limit", "rate limit", "too many requests"]) => {
            ProviderErrorKind::RateLimited
        }
        _ if has(
            &all,
            &[
                "overloaded",
                "server_error",
                "unavailable",
                "internal_error",
                "internal server error",
                "timeout",
                "timed out",
            ],
        ) =>
        {
            ProviderErrorKind::Unavailable
        }
        _ if has(
            &label,
            &["authentication", "permission", "unauthorized", "forbidden"],
        ) =>
        {
            ProviderErrorKind::Access
        }
        _ if has(&label, &["invalid_request", "bad_request"]) => ProviderErrorKind::BadRequest,
        _ => ProviderErrorKind::Other,
    };
    let message = friendly.unwrap_or_else(|| {
        format!(
            "{model}: the model gateway reported an error mid-stream: {}",
            quote(message)
        )
    });
    ProviderError::new(kind, message)
}

/// At most [`QUOTE_LIMIT`] characters of server text.
fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(QUOTE_LIMIT).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(data: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: data.into(),
        }
    }

    fn error_kind(error: &str) -> ProviderErrorKind {
        let mut acc = Accumulator::new("m");
        acc.push(&data(&format!(r#"{{"error": {error}}}"#)))
            .unwrap_err()
            .kind
    }

    #[test]
    fn in_stream_errors_get_a_kind() {
        use ProviderErrorKind::*;
        assert_eq!(
            error_kind(r#"{"type": "overloaded_error", "message": "busy"}"#),
            Unavailable
        );
        assert_eq!(
            error_kind(r#"{"code": 429, "message": "slow down"}"#),
            RateLimited
        );
        assert_eq!(
            error_kind(r#"{"code": "rate_limit_exceeded", "message": "x"}"#),
            RateLimited
        );
        assert_eq!(
            error_kind(r#"{"code": "insufficient_quota", "message": "x"}"#),
            Quota
        );
        assert_eq!(
            error_kind(r#"{"message": "maximum context length is 8k"}"#),
            ContextOverflow
        );
        assert_eq!(
            error_kind(r#"{"type": "invalid_request_error", "message": "no"}"#),
            BadRequest
        );
        assert_eq!(error_kind(r#"{"message": "something odd"}"#), Other);
        assert_eq!(error_kind(r#"{}"#), Other);
    }

    #[test]
    fn malformed_chunks_are_errors_not_panics() {
        for bad in [
            "{",
            "[1,2]",
            "\"text\"",
            "{\"choices\": 5}",
            "nul",
            "{\"choices\":[{\"delta\":7}]}",
        ] {
            let mut acc = Accumulator::new("m");
            let error = acc.push(&data(bad)).unwrap_err();
            assert_eq!(error.kind, ProviderErrorKind::Other, "{bad}");
            assert!(
                error.message.contains("malformed stream chunk"),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn no_prefix_of_a_chunk_panics() {
        let chunk = r#"{"choices":[{"index":0,"delta":{"content":"héllo","reasoning":["x",{"text":"y"}],"tool_calls":[{"index":0,"id":"c","function":{"name":"n","arguments":"{}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":5}}}"#;
        for (end, _) in chunk.char_indices() {
            let mut acc = Accumulator::new("m");
            let _ = acc.push(&data(&chunk[..end]));
            let _ = acc.finish(&[]);
        }
        let mut acc = Accumulator::new("m");
        let events = acc.push(&data(chunk)).unwrap();
        assert_eq!(
            events,
            [
                StreamEvent::ReasoningDelta("xy".into()),
                StreamEvent::TextDelta("héllo".into()),
            ]
        );
        let turn = acc.finish(&[]).unwrap();
        let usage = turn.usage.unwrap();
        assert_eq!(
            (usage.input, usage.cache_read),
            (0, 1),
            "cached tokens are capped at the prompt"
        );
    }

    #[test]
    fn cut_off_streams_fail_and_finished_ones_do_not_need_done() {
        let mut acc = Accumulator::new("m");
        acc.push(&data(r#"{"choices":[{"delta":{"content":"half"}}]}"#))
            .unwrap();
        assert_eq!(
            acc.finish(&[]).unwrap_err().kind,
            ProviderErrorKind::Unavailable
        );

        let mut acc = Accumulator::new("m");
        acc.push(&data(
            r#"{"choices":[{"delta":{"content":"all"},"finish_reason":"length"}]}"#,
        ))
        .unwrap();
        let turn = acc.finish(&[]).unwrap();
        assert_eq!(
            (turn.text.as_str(), turn.finish_reason),
            ("all", FinishReason::Length)
        );
    }

    #[test]
    fn parallel_calls_numbered_alike_are_kept_apart_by_id() {
        let mut acc = Accumulator::new("m");
        for chunk in [
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"k\":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"z"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ] {
            acc.push(&data(chunk)).unwrap();
        }
        let turn = acc.finish(&[]).unwrap();
        let calls: Vec<_> = turn
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.to_string()))
            .collect();
        assert_eq!(
            calls,
            [("a", "x", "{}".into()), ("b", "z", r#"{"k":1}"#.into())]
        );
        assert_eq!(
            turn.finish_reason,
            FinishReason::ToolCalls,
            "calls and `stop` mean tools"
        );
    }
}
