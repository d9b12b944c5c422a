//! A model provider that plays replies from a script: the offline demo and the tests' model.
//!
//! # Script format
//!
//! ```json
//! {"conversations": [
//!   {"when": "deploy", "turns": [
//!     {"reasoning": "The user wants a deploy.", "text": "Checking the branch first.",
//!      "tool_calls": [{"name": "shell", "arguments": {"command": "git status"}}]},
//!     {"text": "All clean, deploying now.", "chunk_delay_ms": 40,
//!      "usage": {"input": 1200, "output": 35}}
//!   ]},
//!   {"when": "*", "turns": [{"text": "Hello! I only know the demo script."}]}
//! ]}
//! ```
//!
//! * A session plays the first conversation whose `when` is a substring of its first `user`
//!   message (the text, or its text parts joined by newlines); `"*"` matches any session. No match
//!   fails the call with "no scripted conversation matches …".
//! * Each model call plays the session's next turn; past the last one the call fails with
//!   "script exhausted". A session this provider has not seen yet starts at the number of
//!   `assistant` messages in its history, so a resumed session continues where it left off.
//! * With `"each_request": true` beside `conversations`, every user request plays anew: the
//!   conversation is the first whose `when` is in the newest `user` message, and its turns are
//!   counted from that message (the `assistant` messages after it), so a session may ask the
//!   same thing again and again (the offline demo). Tool call ids stay unique in the session.
//! * Turn fields, all optional: `text` (default `""`), `reasoning`, `tool_calls` (each `name` plus
//!   `arguments`, a JSON object, or `raw_arguments`, text parsed like model output, so text that
//!   is not a JSON object becomes `{"_raw": text}`), `finish_reason` (`stop`, `tool_calls`,
//!   `length` or `content_filter`; default `tool_calls` when there are tool calls, else `stop`),
//!   `chunk_delay_ms` (pause between streamed pieces, default 0), `fail_with` (stream the text,
//!   then fail with this message), `requires_system` (fail the call unless a `system` message
//!   contains this text: a test that instructions reached the model), `requires_user` (the
//!   same for the text of the `user` messages, their text parts included: a test that what a
//!   person sent, such as a document's extracted text, reached the model), `usage` (`{"input": N, "output": N}`, optionally `cache_read`
//!   and `cache_write`; no usage is reported without it).
//! * Reasoning streams first, then the text, one word with its trailing whitespace per delta.
//!   Tool call ids are `call_<turn index>_<call index>`, unique within a session.
//! * Unknown fields are load errors that name the file and the field.
//! * Capabilities: tools, vision and PDF with a 128,000-token window, except that a model whose
//!   name contains `text-only` has no vision and no PDF (to exercise attachment degrading).
//!
//! Invariant: every call consumes exactly one turn of its session, in order, even when the turn
//! fails; the cursor lock is never held across an await.

mod script;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use workmate_protocol::{ContentPart, Message, SessionId, TokenUsage, ToolCall, UserContent};

use crate::{
    AssistantTurn, Capabilities, ModelProvider, ModelRequest, ModelStream, ProviderError,
    ProviderErrorKind, StreamEvent, StreamSender,
};
pub use script::ScriptError;
use script::{Script, Turn};

/// How many sessions' cursors are kept; beyond that they are forgotten and read again from the
/// sessions' histories.
const KEPT_CURSORS: usize = 1_024;

/// Plays a script; see the module docs for the format.
#[derive(Debug)]
pub struct ScriptedProvider {
    script: Script,
    /// The next turn index of recent sessions (at most [`KEPT_CURSORS`]): a cache, since a
    /// session's history says how many turns it was played.
    cursors: Mutex<HashMap<SessionId, usize>>,
}

impl ScriptedProvider {
    /// A provider playing the script in `json`.
    pub fn from_json(json: &str) -> Result<Self, ScriptError> {
        Ok(Self::new(Script::parse(json, None)?))
    }

    /// A provider playing the script file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        Ok(Self::new(Script::load(path)?))
    }

    fn new(script: Script) -> Self {
        Self {
            script,
            cursors: Mutex::new(HashMap::new()),
        }
    }

    /// Takes the session's turn index and moves its cursor on.
    fn advance(&self, request: &ModelRequest) -> usize {
        let mut cursors = self.cursors.lock().unwrap_or_else(PoisonError::into_inner);
        if cursors.len() >= KEPT_CURSORS && !cursors.contains_key(&request.session_id) {
            cursors.clear();
        }
        let cursor = cursors
            .entry(request.session_id.clone())
            .or_insert_with(|| {
                request
                    .messages
                    .iter()
                    .filter(|m| matches!(m, Message::Assistant { .. }))
                    .count()
            });
        let index = *cursor;
        *cursor += 1;
        index
    }

    /// The turn this call plays, or why there is none: turn `index` of the session's
    /// conversation, or, when every request plays anew, the turn its newest request is at.
    fn pick(&self, request: &ModelRequest, index: usize) -> Result<Turn, ProviderError> {
        let (opening, index) = if self.script.each_request {
            newest_request(&request.messages)
        } else {
            (first_user_text(&request.messages), index)
        };
        let conversation = self
            .script
            .conversations
            .iter()
            .find(|c| c.when == "*" || opening.contains(&c.when))
            .ok_or_else(|| {
                let shown: String = opening.chars().take(80).collect();
                ProviderError::new(
                    ProviderErrorKind::Other,
                    format!("no scripted conversation matches the first user message {shown:?}"),
                )
            })?;
        conversation
            .turns
            .get(index)
            .cloned()
            .ok_or_else(|| ProviderError::new(ProviderErrorKind::Other, "script exhausted"))
    }
}

impl ModelProvider for ScriptedProvider {
    fn capabilities(&self, model: &str) -> Capabilities {
        let media = !model.contains("text-only");
        Capabilities {
            tools: true,
            vision: media,
            pdf: media,
            context_window: 128_000,
        }
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let index = self.advance(&request);
        let turn = match self.pick(&request, index) {
            Ok(turn) => turn,
            Err(error) => return ModelStream::failed(error),
        };
        if let Some(wanted) = &turn.requires_system
            && !request.messages.iter().any(
                |m| matches!(m, Message::System { content } if content.contains(wanted.as_str())),
            )
        {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::Other,
                format!("the scripted turn requires a system message containing {wanted:?}"),
            ));
        }
        if let Some(wanted) = &turn.requires_user
            && !request
                .messages
                .iter()
                .any(|m| user_text(m).contains(wanted.as_str()))
        {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::Other,
                format!("the scripted turn requires a user message containing {wanted:?}"),
            ));
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::Other,
                "the scripted provider must be called inside a tokio runtime",
            ));
        };
        tracing::debug!(session = %request.session_id, turn = index, "Scripted turn started.");
        let (tx, stream) = ModelStream::channel();
        runtime.spawn(play(turn, index, request.model, tx));
        stream
    }
}

/// Streams one turn; returns as soon as the consumer is gone.
async fn play(turn: Turn, index: usize, model: String, tx: StreamSender) {
    let delay = Duration::from_millis(turn.chunk_delay_ms);
    let reasoning = turn.reasoning.as_deref().unwrap_or_default();
    let deltas = word_pieces(reasoning)
        .into_iter()
        .map(|piece| StreamEvent::ReasoningDelta(piece.to_owned()))
        .chain(
            word_pieces(&turn.text)
                .into_iter()
                .map(|p| StreamEvent::TextDelta(p.to_owned())),
        );
    for (n, delta) in deltas.enumerate() {
        if n > 0 && !delay.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = tx.closed() => return,
            }
        }
        if !tx.send(Ok(delta)).await {
            return;
        }
    }
    if let Some(message) = turn.fail_with.clone() {
        tx.send(Err(ProviderError::new(ProviderErrorKind::Other, message)))
            .await;
        return;
    }
    let finish_reason = turn.finish_reason();
    let tool_calls = turn
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, call)| ToolCall {
            id: format!("call_{index}_{i}").into(),
            name: call.name.clone(),
            arguments: call.parsed_arguments(),
        })
        .collect();
    let usage = turn.usage.map(|u| TokenUsage {
        model,
        input: u.input,
        output: u.output,
        cache_read: u.cache_read,
        cache_write: u.cache_write,
    });
    let reply = AssistantTurn {
        text: turn.text,
        reasoning: turn.reasoning.filter(|r| !r.is_empty()),
        tool_calls,
        finish_reason,
        usage,
        provider_state: Default::default(),
    };
    tx.send(Ok(StreamEvent::Completed(reply))).await;
}

/// The text of a `user` message (its text parts joined by newlines); empty for other messages.
fn user_text(message: &Message) -> String {
    match message {
        Message::User {
            content: UserContent::Text(text),
            ..
        } => text.clone(),
        Message::User {
            content: UserContent::Parts(parts),
            ..
        } => parts
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text of the newest `user` message, and how many `assistant` messages follow it: the
/// request being answered, and the turn its answer is at.
fn newest_request(messages: &[Message]) -> (String, usize) {
    let newest = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }));
    let Some(at) = newest else {
        return (String::new(), 0);
    };
    let answered = messages[at..]
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    (user_text(&messages[at]), answered)
}

/// The text of the first `user` message: its text, or its text parts joined by newlines.
fn first_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .find(|m| matches!(m, Message::User { .. }))
        .map(user_text)
        .unwrap_or_default()
}

/// Splits `text` into pieces of one word plus the whitespace after it (leading whitespace stays
/// with the first word); the pieces concatenate to `text`.
fn word_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut seen_word = false;
    let mut after_space = false;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if !space && after_space && seen_word {
            pieces.push(&text[start..i]);
            start = i;
        }
        seen_word |= !space;
        after_space = space;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_words_with_their_trailing_space() {
        assert_eq!(word_pieces("a b c"), ["a ", "b ", "c"]);
        assert_eq!(word_pieces("  hi\n\nthere  "), ["  hi\n\n", "there  "]);
        assert_eq!(word_pieces("   "), ["   "]);
        assert!(word_pieces("").is_empty());
        assert_eq!(word_pieces("héllo wörld"), ["héllo ", "wörld"]);
        let twenty = (1..=20)
            .map(|n| format!("w{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(word_pieces(&twenty).len(), 20);
        assert_eq!(word_pieces(&twenty).concat(), twenty);
    }

    #[test]
    fn first_user_text_reads_text_parts() {
        let messages = vec![
            Message::System {
                content: "be nice".into(),
            },
            Message::User {
                content: UserContent::Parts(vec![
                    ContentPart::Text {
                        text: "look at".into(),
                    },
                    ContentPart::ImageUrl {
                        image_url: workmate_protocol::ImageUrl {
                            url: "data:,".into(),
                        },
                    },
                    ContentPart::Text {
                        text: "this".into(),
                    },
                ]),
                ts: 1,
                author: None,
                display: None,
            },
            Message::User {
                content: "later".into(),
                ts: 2,
                author: None,
                display: None,
            },
        ];
        assert_eq!(first_user_text(&messages), "look at\nthis");
        assert_eq!(first_user_text(&messages[..1]), "");
    }

    #[test]
    fn cursors_are_bounded_and_a_forgotten_one_is_read_from_the_history() {
        let provider = ScriptedProvider::from_json(r#"{"conversations":[]}"#).unwrap();
        let request = |session: &SessionId, answered: usize| ModelRequest {
            session_id: session.clone(),
            model: "demo".into(),
            messages: (0..answered)
                .map(|n| Message::Assistant {
                    content: format!("answer {n}"),
                    ts: 1,
                    tool_calls: Vec::new(),
                    reasoning: None,
                    usage: None,
                    provider_state: Box::default(),
                })
                .collect(),
            tools: Vec::new(),
        };
        let first = SessionId::new();
        assert_eq!(provider.advance(&request(&first, 0)), 0);
        assert_eq!(provider.advance(&request(&first, 1)), 1);
        for _ in 0..KEPT_CURSORS {
            provider.advance(&request(&SessionId::new(), 0));
        }
        let kept = provider.cursors.lock().unwrap().len();
        assert!(kept <= KEPT_CURSORS, "{kept} cursors kept");
        // Forgotten, the first session goes on from its two answers.
        assert_eq!(provider.advance(&request(&first, 2)), 2);
    }

    #[test]
    fn text_only_models_lose_vision_and_pdf() {
        let provider = ScriptedProvider::from_json(r#"{"conversations":[]}"#).unwrap();
        let full = provider.capabilities("demo");
        assert!(full.tools && full.vision && full.pdf);
        assert_eq!(full.context_window, 128_000);
        let text_only = provider.capabilities("demo-text-only");
        assert!(text_only.tools && !text_only.vision && !text_only.pdf);
    }
}
