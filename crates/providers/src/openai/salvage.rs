//! Tool calls a backend wrote into the answer text instead of the `tool_calls` field (spec §6.6):
//! `<tool_call>{"name": …, "arguments": …}</tool_call>` blocks (Hermes-style templates served
//! without a tool parser), bare `{"name": …, "arguments": {…}}` objects, and a line that starts
//! with a tool's name followed by its arguments, `read_file {"path": "a"}` (or a list of argument
//! objects, `read_file [{…}, {…}]`, one call each).
//!
//! Invariant: only a call naming an offered tool is recovered, and only the text it was written
//! in is removed; everything else stays in the answer exactly as the model wrote it.

use std::ops::Range;

use serde_json::Value;
use workmate_protocol::{ToolCall, ToolSpec};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
/// Answers longer than this are not searched: a call written as text is short, and the scan
/// should stay cheap.
const MAX_TEXT: usize = 200_000;

/// A recovered call and the text it was written in.
struct Found {
    span: Range<usize>,
    calls: Vec<(String, Value)>,
}

/// The calls recovered from `text` (ids `salvaged_<n>`) and the text without them, or `None`
/// when there are none.
pub(super) fn salvage(text: &str, tools: &[ToolSpec]) -> Option<(Vec<ToolCall>, String)> {
    if text.len() > MAX_TEXT {
        return None;
    }
    let known = |name: &str| tools.iter().any(|tool| tool.name == name);
    let (mut found, blocks) = tagged(text, &known);
    bare(text, &known, &blocks, &mut found);
    named(text, &known, &blocks, &mut found);
    if found.is_empty() {
        return None;
    }
    found.sort_by_key(|f| f.span.start);

    let mut calls = Vec::new();
    let mut pieces = Vec::new();
    let mut kept_from = 0;
    for f in found {
        if f.span.start < kept_from {
            continue;
        }
        pieces.push(text[kept_from..f.span.start].trim());
        kept_from = f.span.end;
        for (name, arguments) in f.calls {
            calls.push(ToolCall {
                id: format!("salvaged_{}", calls.len()).into(),
                name,
                arguments,
            });
        }
    }
    pieces.push(text[kept_from..].trim());
    let rest = pieces
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Some((calls, rest))
}

/// `<tool_call>` blocks whose every call names a known tool, and the spans of all blocks. A
/// block the model did not close runs to the end of the text (generation often stops on the
/// closing tag).
fn tagged(text: &str, known: &impl Fn(&str) -> bool) -> (Vec<Found>, Vec<Range<usize>>) {
    let mut found = Vec::new();
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find(OPEN).map(|i| i + from) {
        let body = start + OPEN.len();
        let (body_end, end) = match text[body..].find(CLOSE) {
            Some(i) => (body + i, body + i + CLOSE.len()),
            None => (text.len(), text.len()),
        };
        from = end;
        blocks.push(start..end);
        let Ok(value) = serde_json::from_str::<Value>(unfence(&text[body..body_end])) else {
            continue;
        };
        let values = match value {
            Value::Array(values) => values,
            value => vec![value],
        };
        let calls: Option<Vec<_>> = values
            .iter()
            .map(|v| call_from(v, false).filter(|(name, _)| known(name)))
            .collect();
        if let Some(calls) = calls.filter(|c| !c.is_empty()) {
            found.push(Found {
                span: start..end,
                calls,
            });
        }
    }
    (found, blocks)
}

/// Bare call objects outside `<tool_call>` blocks (a block is recovered whole or left whole); a
/// surrounding Markdown code fence goes with them.
fn bare(
    text: &str,
    known: &impl Fn(&str) -> bool,
    blocks: &[Range<usize>],
    found: &mut Vec<Found>,
) {
    let mut at = 0;
    while let Some(start) = text[at..].find('{').map(|i| i + at) {
        if let Some(block) = blocks.iter().find(|b| b.contains(&start)) {
            at = block.end;
            continue;
        }
        // Only an object whose first key is a call's is parsed, which keeps the scan linear on
        // ordinary prose and code.
        let after = text[start + 1..].trim_start();
        if !(after.starts_with("\"name\"") || after.starts_with("\"arguments\"")) {
            at = start + 1;
            continue;
        }
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else {
            at = start + 1;
            continue;
        };
        let end = start + values.byte_offset();
        if let Some(call) = call_from(&value, true).filter(|(name, _)| known(name)) {
            found.push(Found {
                span: with_fence(text, start..end),
                calls: vec![call],
            });
        }
        at = end;
    }
}

/// Lines that start with a known tool's name followed by a JSON object (its arguments) or a list
/// of objects (one call each), outside `<tool_call>` blocks and bare calls already found. Only
/// a whole, parsable value counts, and only at the start of a line, so prose that mentions a
/// tool stays prose.
fn named(
    text: &str,
    known: &impl Fn(&str) -> bool,
    blocks: &[Range<usize>],
    found: &mut Vec<Found>,
) {
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let indent = line.len() - line.trim_start().len();
        let head = start + indent;
        let taken = |at: usize| {
            blocks.iter().any(|b| b.contains(&at)) || found.iter().any(|f| f.span.contains(&at))
        };
        if taken(head) {
            continue;
        }
        let trimmed = &text[head..line_start];
        let name_len = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
            .unwrap_or(trimmed.len());
        let name = &trimmed[..name_len];
        if name.is_empty() || !known(name) {
            continue;
        }
        let value_at =
            head + name_len + (trimmed[name_len..].len() - trimmed[name_len..].trim_start().len());
        if !matches!(text[value_at..].chars().next(), Some('{' | '[')) {
            continue;
        }
        let mut values = serde_json::Deserializer::from_str(&text[value_at..]).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else {
            continue;
        };
        let end = value_at + values.byte_offset();
        let arguments = match value {
            Value::Object(_) => vec![value],
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => items,
            _ => continue,
        };
        found.push(Found {
            span: with_fence(text, head..end),
            calls: arguments
                .into_iter()
                .map(|a| (name.to_owned(), a))
                .collect(),
        });
    }
}

/// A call's tool name and parsed arguments: `{"name", "arguments" | "parameters"}`, or the
/// OpenAI shape `{"function": {"name", "arguments"}}`. A bare object must carry its arguments
/// (an object, or JSON text) to count as a call.
fn call_from(value: &Value, bare: bool) -> Option<(String, Value)> {
    let object = value.as_object()?;
    let object = match object.get("function") {
        Some(Value::Object(function)) if !object.contains_key("name") => function,
        _ => object,
    };
    let name = object.get("name")?.as_str()?.to_owned();
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        Some(arguments @ Value::Object(_)) => arguments.clone(),
        Some(Value::String(text)) => ToolCall::parse_arguments(text),
        None if !bare => Value::Object(serde_json::Map::new()),
        _ => return None,
    };
    Some((name, arguments))
}

/// The text inside a Markdown code fence, or the text itself.
fn unfence(text: &str) -> &str {
    let text = text.trim();
    let inner = text
        .strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"));
    inner.unwrap_or(text).trim()
}

/// `span` widened to a code fence that holds nothing else.
fn with_fence(text: &str, span: Range<usize>) -> Range<usize> {
    let before = text[..span.start].trim_end();
    let after = text[span.end..].trim_start();
    let opener = ["```json", "```"].into_iter().find(|f| before.ends_with(f));
    match opener {
        Some(opener) if after.starts_with("```") => {
            before.len() - opener.len()..text.len() - after.len() + 3
        }
        _ => span,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        ["read_file", "shell"]
            .into_iter()
            .map(|name| ToolSpec {
                name: name.into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    fn names(calls: &[ToolCall]) -> Vec<(&str, &str, String)> {
        calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.to_string()))
            .collect()
    }

    #[test]
    fn bare_objects_of_known_tools_are_recovered_with_their_fence() {
        let text = "Reading it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```\nthen {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\":\\\"ls\\\"}\"}";
        let (calls, rest) = salvage(text, &tools()).unwrap();
        assert_eq!(
            names(&calls),
            [
                ("salvaged_0", "read_file", r#"{"path":"a"}"#.to_owned()),
                ("salvaged_1", "shell", r#"{"command":"ls"}"#.to_owned()),
            ]
        );
        assert_eq!(rest, "Reading it.\n\nthen");
    }

    #[test]
    fn a_line_naming_a_tool_before_its_arguments_is_a_call() {
        let text = "Let me look.\nread_file {\"path\": \"notes.md\"}\n```\nshell [{\"command\": \"ls\"}, {\"command\": \"pwd\"}]\n```\nDone.";
        let (calls, rest) = salvage(text, &tools()).unwrap();
        assert_eq!(
            names(&calls),
            [
                (
                    "salvaged_0",
                    "read_file",
                    r#"{"path":"notes.md"}"#.to_owned()
                ),
                ("salvaged_1", "shell", r#"{"command":"ls"}"#.to_owned()),
                ("salvaged_2", "shell", r#"{"command":"pwd"}"#.to_owned()),
            ]
        );
        assert_eq!(rest, "Let me look.\n\nDone.");
    }

    #[test]
    fn unknown_tools_prose_and_code_stay_text() {
        for text in [
            r#"{"name": "rm_rf", "arguments": {}}"#,
            r#"<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>"#,
            r#"<tool_call>[{"name": "shell", "arguments": {}}, {"name": "nope"}]</tool_call>"#,
            r#"{"name": "shell"}"#,
            "fn main() { let x = {\"name\": 1}; }",
            "{{{{ unbalanced \"name\" {",
            "<tool_call>not json",
            "I ran read_file {\"path\": \"a\"} earlier.",
            "rm_rf {\"path\": \"/\"}",
            "shell {\"command\": ",
            "shell [1, 2]",
            "shell []",
            "",
        ] {
            assert!(salvage(text, &tools()).is_none(), "{text}");
        }
    }

    #[test]
    fn no_prefix_of_a_call_panics() {
        let text = "Voilà — ```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"échó\"}}\n``` <tool_call>{\"name\": \"read_file\"}</tool_call>";
        for (end, _) in text.char_indices() {
            let _ = salvage(&text[..end], &tools());
        }
        assert_eq!(salvage(text, &tools()).unwrap().0.len(), 2);
    }

    #[test]
    fn unclosed_and_multi_call_blocks() {
        let text = "<tool_call>\n[{\"name\": \"shell\", \"arguments\": {\"command\": \"pwd\"}}, {\"function\": {\"name\": \"read_file\", \"arguments\": \"oops\"}}]\n</tool_call>\nAfter.<tool_call>{\"name\": \"shell\"}";
        let (calls, rest) = salvage(text, &tools()).unwrap();
        assert_eq!(
            names(&calls),
            [
                ("salvaged_0", "shell", r#"{"command":"pwd"}"#.to_owned()),
                ("salvaged_1", "read_file", r#"{"_raw":"oops"}"#.to_owned()),
                ("salvaged_2", "shell", "{}".to_owned()),
            ]
        );
        assert_eq!(rest, "After.");
    }
}
