//! Anthropic's event stream folded into deltas and one completed turn.
//!
//! Invariants:
//! * Text and thinking deltas are forwarded as they arrive; tool-call arguments are accumulated
//!   per block index and parsed once, at the block's stop (or at the end for a block never
//!   stopped), so a call split over any number of deltas parses the same.
//! * The turn completes only at `message_stop`; an `error` event ends the stream with an error of
//!   the matching kind, and malformed data ends it with [`ProviderErrorKind::Other`]. Nothing
//!   the server sends can panic this code.
//! * Thinking blocks are kept whole, signature included, as the turn's `_anthropic` state so the
//!   next call can replay them.

use std::collections::BTreeMap;

use workmate_protocol::{ProviderState, TokenUsage, ToolCall};

use super::types::{
    Delta, ReplayState, ServerEvent, StartBlock, ThinkingBlock, WireError, WireUsage,
};
use crate::http::SseEvent;
use crate::{
    AssistantTurn, FinishReason, ProviderError, ProviderErrorKind, StreamEvent,
    is_context_overflow, is_quota,
};

/// A block being received.
#[derive(Debug)]
enum OpenBlock {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        /// The `input` of the start event, used when no argument delta follows.
        initial: serde_json::Value,
        parsed: Option<serde_json::Value>,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Ignored,
}

/// What the stream has said so far.
#[derive(Debug)]
pub(crate) struct TurnReader {
    /// The routed model id, for usage and error messages.
    model: String,
    blocks: BTreeMap<usize, OpenBlock>,
    usage: Option<WireUsage>,
    stop_reason: Option<String>,
    /// Whether any Anthropic event arrived (tells "not an event stream" from "cut short").
    started: bool,
    done: bool,
}

impl TurnReader {
    pub(crate) fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            blocks: BTreeMap::new(),
            usage: None,
            stop_reason: None,
            started: false,
            done: false,
        }
    }

    /// Whether `message_stop` arrived (the last event pushed was `Completed`).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Folds in one event, pushing what it produced onto `out`.
    pub(crate) fn push(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if self.done || data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let parsed: ServerEvent = serde_json::from_str(data).map_err(|e| {
            let shown: String = data.chars().take(200).collect();
            self.malformed(&format!("unreadable stream event ({e}): {shown}"))
        })?;
        self.started = true;
        match parsed {
            ServerEvent::MessageStart { message } => self.add_usage(message.usage),
            ServerEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start(index, content_block, out),
            ServerEvent::ContentBlockDelta { index, delta } => self.delta(index, delta, out)?,
            ServerEvent::ContentBlockStop { index } => self.stop(index)?,
            ServerEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                self.add_usage(usage);
            }
            ServerEvent::MessageStop => {
                out.push(StreamEvent::Completed(self.complete()));
                self.done = true;
            }
            ServerEvent::Error { error } => return Err(stream_error(&self.model, &error)),
            ServerEvent::Ping | ServerEvent::Unknown => {}
        }
        Ok(())
    }

    /// The error for a stream that ended without `message_stop`.
    pub(crate) fn ended_early(&self, content_type: &str) -> ProviderError {
        if self.started {
            ProviderError::new(
                ProviderErrorKind::Unavailable,
                format!(
                    "{}: the reply stream ended before the reply was complete",
                    self.model
                ),
            )
        } else {
            self.malformed(&format!(
                "the gateway's reply is not an Anthropic event stream (content type {content_type:?})"
            ))
        }
    }

    fn malformed(&self, what: &str) -> ProviderError {
        ProviderError::new(ProviderErrorKind::Other, format!("{}: {what}", self.model))
    }

    /// Later counts replace earlier ones: `message_delta` usage is cumulative.
    fn add_usage(&mut self, usage: Option<WireUsage>) {
        let Some(new) = usage else { return };
        let old = self.usage.unwrap_or_default();
        self.usage = Some(WireUsage {
            input_tokens: new.input_tokens.or(old.input_tokens),
            output_tokens: new.output_tokens.or(old.output_tokens),
            cache_creation_input_tokens: new
                .cache_creation_input_tokens
                .or(old.cache_creation_input_tokens),
            cache_read_input_tokens: new.cache_read_input_tokens.or(old.cache_read_input_tokens),
        });
    }

    fn start(&mut self, index: usize, block: StartBlock, out: &mut Vec<StreamEvent>) {
        let open = match block {
            StartBlock::Text { text } => {
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta(text.clone()));
                }
                OpenBlock::Text(text)
            }
            StartBlock::ToolUse { id, name, input } => OpenBlock::Tool {
                id,
                name,
                json: String::new(),
                initial: input,
                parsed: None,
            },
            StartBlock::Thinking {
                thinking,
                signature,
            } => {
                if !thinking.is_empty() {
                    out.push(StreamEvent::ReasoningDelta(thinking.clone()));
                }
                OpenBlock::Thinking {
                    thinking,
                    signature,
                }
            }
            StartBlock::RedactedThinking { data } => OpenBlock::Redacted(data),
            StartBlock::Other => OpenBlock::Ignored,
        };
        self.blocks.insert(index, open);
    }

    fn delta(
        &mut self,
        index: usize,
        delta: Delta,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let Some(block) = self.blocks.get_mut(&index) else {
            return Err(self.malformed(&format!("a delta for block {index}, which never started")));
        };
        match (block, delta) {
            (OpenBlock::Text(text), Delta::Text { text: piece }) => {
                text.push_str(&piece);
                out.push(StreamEvent::TextDelta(piece));
            }
            (OpenBlock::Tool { json, .. }, Delta::InputJson { partial_json }) => {
                json.push_str(&partial_json);
            }
            (OpenBlock::Thinking { thinking, .. }, Delta::Thinking { thinking: piece }) => {
                thinking.push_str(&piece);
                out.push(StreamEvent::ReasoningDelta(piece));
            }
            (OpenBlock::Thinking { signature, .. }, Delta::Signature { signature: piece }) => {
                signature.push_str(&piece);
            }
            // Citations and other additions, or a delta that does not fit its block: nothing
            // this turn can carry.
            _ => {}
        }
        Ok(())
    }

    fn stop(&mut self, index: usize) -> Result<(), ProviderError> {
        match self.blocks.get_mut(&index) {
            Some(block) => {
                parse_tool_input(block);
                Ok(())
            }
            None => Err(self.malformed(&format!("a stop for block {index}, which never started"))),
        }
    }

    /// The finished turn, blocks in index order.
    fn complete(&mut self) -> AssistantTurn {
        let mut text = String::new();
        let mut reasoning = String::new();
        let mut tool_calls = Vec::new();
        let mut replay = ReplayState::default();
        for block in std::mem::take(&mut self.blocks).into_values() {
            let mut block = block;
            parse_tool_input(&mut block);
            match block {
                OpenBlock::Text(piece) => text.push_str(&piece),
                OpenBlock::Tool {
                    id, name, parsed, ..
                } => tool_calls.push(ToolCall {
                    id: id.into(),
                    name,
                    arguments: parsed.unwrap_or_else(|| serde_json::json!({})),
                }),
                OpenBlock::Thinking {
                    thinking,
                    signature,
                } => {
                    reasoning.push_str(&thinking);
                    replay.thinking_blocks.push(ThinkingBlock::Thinking {
                        thinking,
                        signature,
                    });
                }
                OpenBlock::Redacted(data) => {
                    replay
                        .thinking_blocks
                        .push(ThinkingBlock::RedactedThinking { data });
                }
                OpenBlock::Ignored => {}
            }
        }
        let finish_reason = match self.stop_reason.as_deref() {
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            // end_turn, stop_sequence, pause_turn, or none reported.
            _ => FinishReason::Stop,
        };
        let usage = self.usage.map(|u| TokenUsage {
            model: self.model.clone(),
            input: u.input_tokens.unwrap_or(0),
            output: u.output_tokens.unwrap_or(0),
            cache_read: u.cache_read_input_tokens.unwrap_or(0),
            cache_write: u.cache_creation_input_tokens.unwrap_or(0),
        });
        AssistantTurn {
            text,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            tool_calls,
            finish_reason,
            usage,
            provider_state: ProviderState {
                anthropic: replay.to_value(),
                ..ProviderState::default()
            },
        }
    }
}

/// Parses a tool block's accumulated arguments, once.
fn parse_tool_input(block: &mut OpenBlock) {
    if let OpenBlock::Tool {
        json,
        initial,
        parsed: parsed @ None,
        ..
    } = block
    {
        let from_start =
            json.trim().is_empty() && initial.as_object().is_some_and(|o| !o.is_empty());
        *parsed = Some(if from_start {
            initial.clone()
        } else {
            ToolCall::parse_arguments(json)
        });
    }
}

/// The error an `error` event stands for.
pub(crate) fn stream_error(model: &str, error: &WireError) -> ProviderError {
    let kind = match error.kind.as_str() {
        "overloaded_error" | "api_error" | "timeout_error" => ProviderErrorKind::Unavailable,
        "rate_limit_error" => ProviderErrorKind::RateLimited,
        "authentication_error" | "permission_error" | "not_found_error" => {
            ProviderErrorKind::Access
        }
        "billing_error" => ProviderErrorKind::Quota,
        "invalid_request_error" | "request_too_large" if is_context_overflow(&error.message) => {
            ProviderErrorKind::ContextOverflow
        }
        _ if is_quota(&error.message) => ProviderErrorKind::Quota,
        "invalid_request_error" | "request_too_large" => ProviderErrorKind::BadRequest,
        _ => ProviderErrorKind::Other,
    };
    let raw = format!("{model}: {}: {}", error.kind, error.message);
    let text = format!("{}: {}", error.kind, error.message);
    let message = match kind {
        ProviderErrorKind::Access | ProviderErrorKind::Quota => {
            crate::friendly_error(model, &text).unwrap_or(raw)
        }
        _ => raw,
    };
    ProviderError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> (Vec<StreamEvent>, Result<(), ProviderError>) {
        let mut reader = TurnReader::new("anthropic:claude-x");
        let mut out = Vec::new();
        for data in lines {
            let event = SseEvent {
                event: String::new(),
                data: (*data).to_owned(),
            };
            if let Err(error) = reader.push(&event, &mut out) {
                return (out, Err(error));
            }
        }
        (out, Ok(()))
    }

    #[test]
    fn malformed_data_fails_with_other_and_never_panics() {
        let cases: &[&[&str]] = &[
            &["{not json"],
            &[
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#,
            ],
            &[r#"{"type":"content_block_stop","index":3}"#],
            &[r#"{"type":"content_block_start","index":-1,"content_block":{"type":"text"}}"#],
            &[r#"{"type":"content_block_start","index":0}"#],
            &[r#"{"type":"message_start","message":{"usage":{"input_tokens":"many"}}}"#],
        ];
        for case in cases {
            let (_, result) = feed(case);
            let error = result.expect_err("malformed data must fail");
            assert_eq!(error.kind, ProviderErrorKind::Other, "{case:?}: {error}");
            assert!(
                error.message.starts_with("anthropic:claude-x: "),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn unknown_events_blocks_and_deltas_are_skipped() {
        let (out, result) = feed(&[
            r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":3}}}"#,
            r#"{"type":"brand_new_event","x":1}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"hi"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":2}}"#,
            "[DONE]",
            r#"{"type":"message_stop"}"#,
        ]);
        result.unwrap();
        let [StreamEvent::TextDelta(hi), StreamEvent::Completed(turn)] = out.as_slice() else {
            panic!("unexpected events {out:?}");
        };
        assert_eq!(hi, "hi");
        assert_eq!(turn.finish_reason, FinishReason::ContentFilter);
        assert!(turn.tool_calls.is_empty() && turn.provider_state.is_empty());
        let usage = turn.usage.as_ref().unwrap();
        assert_eq!((usage.input, usage.output), (3, 2));
    }

    #[test]
    fn error_types_map_to_kinds() {
        let kind = |kind: &str, message: &str| {
            let error = WireError {
                kind: kind.into(),
                message: message.into(),
            };
            stream_error("anthropic:claude-x", &error).kind
        };
        assert_eq!(
            kind("overloaded_error", "Overloaded"),
            ProviderErrorKind::Unavailable
        );
        assert_eq!(kind("api_error", "boom"), ProviderErrorKind::Unavailable);
        assert_eq!(
            kind("rate_limit_error", "slow"),
            ProviderErrorKind::RateLimited
        );
        assert_eq!(
            kind("authentication_error", "key"),
            ProviderErrorKind::Access
        );
        assert_eq!(kind("permission_error", "no"), ProviderErrorKind::Access);
        assert_eq!(
            kind("invalid_request_error", "bad"),
            ProviderErrorKind::BadRequest
        );
        assert_eq!(
            kind(
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            ProviderErrorKind::ContextOverflow
        );
        assert_eq!(
            kind("invalid_request_error", "Your credit balance is too low"),
            ProviderErrorKind::Quota
        );
        assert_eq!(kind("mystery_error", "?"), ProviderErrorKind::Other);
    }

    #[test]
    fn a_tool_block_never_stopped_still_parses_and_start_input_is_kept() {
        let (out, result) = feed(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t0","name":"a","input":{"x":1}}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"b","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"y\":"}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        result.unwrap();
        let Some(StreamEvent::Completed(turn)) = out.last() else {
            panic!("no turn: {out:?}");
        };
        assert_eq!(turn.tool_calls[0].arguments, serde_json::json!({"x": 1}));
        assert_eq!(turn.tool_calls[1].raw_arguments(), Some("{\"y\":"));
        assert!(turn.usage.is_none());
    }
}
