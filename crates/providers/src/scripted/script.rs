//! The script file format and its loading.
//!
//! Invariant: a [`Script`] that loaded is fully validated: every field was known, every finish
//! reason is one of the four, and every tool call has at most one of `arguments` (a JSON object)
//! and `raw_arguments`. Streaming never has to report a script mistake.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use workmate_protocol::ToolCall;

use crate::FinishReason;

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The script file could not be read.
    #[error("cannot read script file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The script text is not a valid script.
    #[error("invalid script {}: {message}", Origin(path.as_deref()))]
    Invalid {
        /// The file, when the script came from one.
        path: Option<PathBuf>,
        /// What is wrong, with the line and column when the JSON parser knows them.
        message: String,
    },
}

/// Names where a script came from in an error message.
struct Origin<'a>(Option<&'a Path>);

impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, "file {}", path.display()),
            None => f.write_str("(inline JSON)"),
        }
    }
}

/// A whole script.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Script {
    pub(crate) conversations: Vec<Conversation>,
    /// Whether every user request plays anew (see the provider's docs).
    #[serde(default)]
    pub(crate) each_request: bool,
}

/// The turns played to sessions whose first user message contains `when`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Conversation {
    pub(crate) when: String,
    pub(crate) turns: Vec<Turn>,
}

/// One scripted model reply.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Turn {
    #[serde(default)]
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) reasoning: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Vec<ScriptToolCall>,
    #[serde(default)]
    pub(crate) finish_reason: Option<FinishReason>,
    #[serde(default)]
    pub(crate) chunk_delay_ms: u64,
    #[serde(default)]
    pub(crate) fail_with: Option<String>,
    #[serde(default)]
    pub(crate) requires_system: Option<String>,
    #[serde(default)]
    pub(crate) requires_user: Option<String>,
    #[serde(default)]
    pub(crate) usage: Option<ScriptUsage>,
}

/// A scripted tool call: structured `arguments`, or `raw_arguments` text parsed the way a real
/// provider parses model output (so a test can produce a mangled call).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScriptToolCall {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
    #[serde(default)]
    pub(crate) raw_arguments: Option<String>,
}

/// Scripted token counts.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScriptUsage {
    pub(crate) input: u64,
    pub(crate) output: u64,
    #[serde(default)]
    pub(crate) cache_read: u64,
    #[serde(default)]
    pub(crate) cache_write: u64,
}

impl Script {
    /// Parses and validates script text; `path` only names the origin in errors.
    pub(crate) fn parse(text: &str, path: Option<&Path>) -> Result<Self, ScriptError> {
        let invalid = |message: String| ScriptError::Invalid {
            path: path.map(Path::to_path_buf),
            message,
        };
        let script: Script = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        script.validate().map_err(invalid)?;
        Ok(script)
    }

    /// Reads, parses and validates a script file.
    pub(crate) fn load(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, Some(path))
    }

    fn validate(&self) -> Result<(), String> {
        for (c, conversation) in self.conversations.iter().enumerate() {
            for (t, turn) in conversation.turns.iter().enumerate() {
                for (i, call) in turn.tool_calls.iter().enumerate() {
                    let at = format!("conversations[{c}].turns[{t}].tool_calls[{i}]");
                    if call.arguments.is_some() && call.raw_arguments.is_some() {
                        return Err(format!(
                            "{at}: give either `arguments` or `raw_arguments`, not both"
                        ));
                    }
                    if let Some(args) = &call.arguments
                        && !args.is_object()
                    {
                        return Err(format!(
                            "{at}: `arguments` must be a JSON object (use `raw_arguments` for \
                             text that is not one)"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

impl ScriptToolCall {
    /// The arguments a real provider would have produced.
    pub(crate) fn parsed_arguments(&self) -> Value {
        match (&self.arguments, &self.raw_arguments) {
            (Some(args), _) => args.clone(),
            (None, Some(raw)) => ToolCall::parse_arguments(raw),
            (None, None) => Value::Object(serde_json::Map::new()),
        }
    }
}

impl Turn {
    /// The scripted finish reason, or the one a model would give for this turn.
    pub(crate) fn finish_reason(&self) -> FinishReason {
        match &self.finish_reason {
            Some(reason) => reason.clone(),
            None if self.tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn minimal_turns_take_defaults() {
        let script = Script::parse(
            r#"{"conversations":[{"when":"*","turns":[{},{"tool_calls":[{"name":"ls"}]}]}]}"#,
            None,
        )
        .unwrap();
        let turns = &script.conversations[0].turns;
        assert_eq!(turns[0].text, "");
        assert_eq!(turns[0].finish_reason(), FinishReason::Stop);
        assert_eq!(turns[1].finish_reason(), FinishReason::ToolCalls);
        assert_eq!(turns[1].tool_calls[0].parsed_arguments(), json!({}));
    }

    #[test]
    fn finish_reasons_are_the_four_names() {
        for name in ["stop", "tool_calls", "length", "content_filter"] {
            let text = format!(
                r#"{{"conversations":[{{"when":"*","turns":[{{"finish_reason":"{name}"}}]}}]}}"#
            );
            assert!(Script::parse(&text, None).is_ok(), "{name}");
        }
        let err = Script::parse(
            r#"{"conversations":[{"when":"*","turns":[{"finish_reason":"done"}]}]}"#,
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("done"), "{err}");
    }

    #[test]
    fn unknown_fields_are_named_with_the_origin() {
        let err = Script::parse(
            r#"{"conversations":[{"when":"*","turns":[{"txt":"hi"}]}]}"#,
            Some(Path::new("/tmp/demo.json")),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("/tmp/demo.json"), "{err}");
        assert!(err.contains("unknown field `txt`"), "{err}");
        let inline = Script::parse(r#"{"conversation":[]}"#, None)
            .unwrap_err()
            .to_string();
        assert!(
            inline.contains("(inline JSON)") && inline.contains("conversation"),
            "{inline}"
        );
    }

    #[test]
    fn tool_call_arguments_are_checked() {
        let both = Script::parse(
            r#"{"conversations":[{"when":"*","turns":[{"tool_calls":[
                {"name":"ls","arguments":{},"raw_arguments":"{"}]}]}]}"#,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            both.contains("conversations[0].turns[0].tool_calls[0]"),
            "{both}"
        );
        let not_object = Script::parse(
            r#"{"conversations":[{"when":"*","turns":[{"tool_calls":[
                {"name":"ls","arguments":[1]}]}]}]}"#,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(not_object.contains("must be a JSON object"), "{not_object}");
    }

    #[test]
    fn raw_arguments_parse_like_model_output() {
        let call = ScriptToolCall {
            name: "write".into(),
            arguments: None,
            raw_arguments: Some(r#"{"path": "a.txt", "#.into()),
        };
        assert_eq!(
            call.parsed_arguments(),
            json!({"_raw": r#"{"path": "a.txt", "#})
        );
        let good = ScriptToolCall {
            raw_arguments: Some(r#"{"a":1}"#.into()),
            ..call
        };
        assert_eq!(good.parsed_arguments(), json!({"a": 1}));
    }
}
