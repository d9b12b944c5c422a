//! The canonical history turned into a Gemini request (spec §6.3).
//!
//! Invariants: roles alternate (consecutive turns of one role are merged into one `Content`, so
//! parallel tool results travel together); a tool result names the function of the call it
//! answers; only Gemini's own `_gemini` replay state is sent back, every other sidecar stays
//! home; and no `Content` has empty `parts` (Gemini refuses them).

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use workmate_protocol::{ContentPart, Message, ToolCall, UserContent};

use super::schema::sanitize_schema;
use super::types::{
    Content, FunctionCall, FunctionDeclaration, FunctionResponse, GenerateContentRequest,
    GenerationConfig, InlineData, Part, ThinkingConfig, Tool,
};
use crate::ModelRequest;

/// The output ceiling every call asks for (spec §6.6).
const MAX_OUTPUT_TOKENS: u32 = 32_000;

/// What Gemini 3 accepts in place of a thought signature on a call it did not make (a history
/// begun with another model): Google's documented escape hatch, since an unsigned call in the
/// current turn is a 400 on those models.
const UNSIGNED_CALL: &str = "skip_thought_signature_validator";

/// The `_gemini` key mapping call ids to their thought signatures.
pub(crate) const CALL_SIGNATURES: &str = "thought_signatures";
/// The `_gemini` key holding the signature that came with the answer text.
pub(crate) const TEXT_SIGNATURE: &str = "text_signature";

/// The request body for `request`.
pub(crate) fn build(request: &ModelRequest) -> GenerateContentRequest {
    let call_names: HashMap<&str, &str> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .map(|call| (call.id.as_str(), call.name.as_str()))
        .collect();
    let gemini3 = model_family(&request.model).starts_with("gemini-3");

    let mut system = Vec::new();
    let mut contents: Vec<Content> = Vec::new();
    for message in &request.messages {
        let (role, parts) = match message {
            Message::System { content } if !content.trim().is_empty() => {
                system.push(Part::text(content.clone()));
                continue;
            }
            Message::User { content, .. } => ("user", user_parts(content)),
            Message::Assistant {
                content,
                tool_calls,
                provider_state,
                ..
            } => (
                "model",
                model_parts(content, tool_calls, provider_state.gemini.as_ref(), gemini3),
            ),
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => {
                let name = call_names
                    .get(tool_call_id.as_str())
                    .copied()
                    .unwrap_or(tool_call_id.as_str());
                ("user", vec![tool_result(name, content)])
            }
            _ => continue,
        };
        push(&mut contents, role, parts);
    }

    let declarations: Vec<FunctionDeclaration> = request
        .tools
        .iter()
        .map(|tool| FunctionDeclaration {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: parameters(&tool.parameters),
        })
        .collect();
    let tools = if declarations.is_empty() {
        Vec::new()
    } else {
        vec![Tool {
            function_declarations: declarations,
        }]
    };

    GenerateContentRequest {
        contents,
        system_instruction: (!system.is_empty()).then(|| Content {
            role: None,
            parts: system,
        }),
        tools,
        generation_config: GenerationConfig {
            max_output_tokens: MAX_OUTPUT_TOKENS,
            thinking_config: thinks(&request.model).then_some(ThinkingConfig {
                include_thoughts: true,
            }),
        },
    }
}

/// The model name without any path before it, lowercased (`models/Gemini-2.5-Pro` → `gemini-2.5-pro`).
fn model_family(model: &str) -> String {
    model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase()
}

/// Whether `model` is a thinking model (Gemini 2.5 and later), whose thought summaries are asked
/// for. Older models refuse a thinking configuration, so they get none.
fn thinks(model: &str) -> bool {
    let family = model_family(model);
    family.starts_with("gemini-2.5") || family.starts_with("gemini-3")
}

/// Appends a turn, merging it into the previous one when the role repeats.
fn push(contents: &mut Vec<Content>, role: &str, parts: Vec<Part>) {
    if parts.is_empty() {
        return;
    }
    match contents.last_mut() {
        Some(last) if last.role.as_deref() == Some(role) => last.parts.extend(parts),
        _ => contents.push(Content {
            role: Some(role.to_owned()),
            parts,
        }),
    }
}

fn user_parts(content: &UserContent) -> Vec<Part> {
    match content {
        UserContent::Text(text) if text.is_empty() => Vec::new(),
        UserContent::Text(text) => vec![Part::text(text.clone())],
        UserContent::Parts(parts) => parts
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } if text.is_empty() => None,
                ContentPart::Text { text } => Some(Part::text(text.clone())),
                ContentPart::ImageUrl { image_url } => {
                    Some(inline(&image_url.url, None).unwrap_or_else(|| {
                        Part::text("[image attachment — could not be sent: not an inline image]")
                    }))
                }
                ContentPart::File { file } => Some(
                    inline(&file.file_data, Some("application/pdf")).unwrap_or_else(|| {
                        Part::text(format!(
                            "[file attachment {} — could not be sent]",
                            file.filename
                        ))
                    }),
                ),
                _ => None,
            })
            .collect(),
    }
}

/// A base64 data URL as inline data; `mime` overrides the URL's media type.
fn inline(url: &str, mime: Option<&str>) -> Option<Part> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let media = meta.strip_suffix(";base64")?;
    let mime_type = mime.unwrap_or(media);
    if mime_type.is_empty() || data.is_empty() {
        return None;
    }
    Some(Part {
        inline_data: Some(InlineData {
            mime_type: mime_type.to_owned(),
            data: data.to_owned(),
        }),
        ..Part::default()
    })
}

/// An assistant message: its text, then its calls, each with the thought signature Gemini gave
/// it when it was made.
fn model_parts(
    content: &str,
    calls: &[ToolCall],
    state: Option<&Value>,
    gemini3: bool,
) -> Vec<Part> {
    let signatures = state
        .and_then(|s| s.get(CALL_SIGNATURES))
        .and_then(Value::as_object);
    let text_signature = state
        .and_then(|s| s.get(TEXT_SIGNATURE))
        .and_then(Value::as_str);
    let mut parts = Vec::new();
    if !content.is_empty() {
        parts.push(Part {
            thought_signature: text_signature.map(str::to_owned),
            ..Part::text(content)
        });
    }
    for (n, call) in calls.iter().enumerate() {
        let signature = signatures
            .and_then(|s| s.get(call.id.as_str()))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| (gemini3 && n == 0).then(|| UNSIGNED_CALL.to_owned()));
        let args = match &call.arguments {
            Value::Object(map) if !map.contains_key(ToolCall::RAW_KEY) => {
                Value::Object(map.clone())
            }
            _ => Value::Object(Map::new()),
        };
        parts.push(Part {
            function_call: Some(FunctionCall {
                name: call.name.clone(),
                args,
            }),
            thought_signature: signature,
            ..Part::default()
        });
    }
    parts
}

/// A tool result: a JSON object result is sent as the response itself, anything else as
/// `{"result": text}` (Gemini wants an object).
fn tool_result(name: &str, content: &str) -> Part {
    let response = match serde_json::from_str::<Value>(content) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({ "result": content }),
    };
    Part {
        function_response: Some(FunctionResponse {
            name: name.to_owned(),
            response,
        }),
        ..Part::default()
    }
}

/// A tool's parameters for Gemini: sanitized, and left out when they take nothing (Gemini
/// refuses an object schema with no properties).
fn parameters(schema: &Value) -> Option<Value> {
    let sanitized = sanitize_schema(schema);
    let has_properties = sanitized
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let is_object = sanitized
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(|t| t == "object");
    (has_properties || !is_object).then_some(sanitized)
}

#[cfg(test)]
mod tests {
    use workmate_protocol::{FileData, ImageUrl, ProviderState, SessionId, ToolSpec};

    use super::*;

    fn assistant(content: &str, calls: Vec<ToolCall>, gemini: Option<Value>) -> Message {
        Message::Assistant {
            content: content.into(),
            ts: 1,
            tool_calls: calls,
            reasoning: Some("hidden".into()),
            usage: None,
            provider_state: Box::new(ProviderState {
                gemini,
                openai: Some(json!({"items": []})),
                anthropic: None,
            }),
        }
    }

    fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }

    fn tool(id: &str, content: &str) -> Message {
        Message::Tool {
            tool_call_id: id.into(),
            content: content.into(),
            ts: 1,
            display: None,
        }
    }

    fn body(model: &str, messages: Vec<Message>, tools: Vec<ToolSpec>) -> Value {
        let request = ModelRequest {
            session_id: SessionId::new(),
            model: model.into(),
            messages,
            tools,
        };
        serde_json::to_value(build(&request)).unwrap()
    }

    #[test]
    fn attachments_become_inline_data() {
        let user = Message::User {
            content: UserContent::Parts(vec![
                ContentPart::Text { text: "see".into() },
                ContentPart::ImageUrl {
                    image_url: ImageUrl {
                        url: "data:image/png;base64,iVBO".into(),
                    },
                },
                ContentPart::File {
                    file: FileData {
                        filename: "a.pdf".into(),
                        file_data: "data:application/octet-stream;base64,JVBE".into(),
                        text: None,
                    },
                },
                ContentPart::ImageUrl {
                    image_url: ImageUrl {
                        url: "https://example.com/x.png".into(),
                    },
                },
            ]),
            ts: 1,
            author: None,
            display: Some("shown".into()),
        };
        let body = body("gemini-2.0-flash", vec![user], Vec::new());
        assert_eq!(
            body["contents"][0]["parts"],
            json!([
                {"text": "see"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                {"inlineData": {"mimeType": "application/pdf", "data": "JVBE"}},
                {"text": "[image attachment — could not be sent: not an inline image]"}
            ])
        );
        assert!(body["generationConfig"].get("thinkingConfig").is_none());
        assert_eq!(body["generationConfig"]["maxOutputTokens"], 32_000);
        assert!(body.get("tools").is_none() && body.get("systemInstruction").is_none());
    }

    #[test]
    fn signatures_are_replayed_and_raw_arguments_dropped() {
        let state = json!({CALL_SIGNATURES: {"c2": "sig-2"}, TEXT_SIGNATURE: "sig-t"});
        let messages = vec![
            Message::User {
                content: "go".into(),
                ts: 1,
                author: None,
                display: None,
            },
            assistant(
                "working",
                vec![
                    call("c1", "broken", json!({"_raw": "{oops"})),
                    call("c2", "read", json!({"p": 1})),
                ],
                Some(state),
            ),
            tool("c1", "bad args"),
            tool("c2", "{\"ok\": true}"),
        ];
        let body = body("gemini-2.5-pro", messages, Vec::new());
        assert_eq!(
            body["contents"][1],
            json!({"role": "model", "parts": [
                {"text": "working", "thoughtSignature": "sig-t"},
                {"functionCall": {"name": "broken", "args": {}}},
                {"functionCall": {"name": "read", "args": {"p": 1}}, "thoughtSignature": "sig-2"}
            ]})
        );
        assert_eq!(
            body["contents"][2]["parts"][0]["functionResponse"],
            json!({"name": "broken", "response": {"result": "bad args"}})
        );
        assert_eq!(
            body["contents"][2]["parts"][1]["functionResponse"]["response"],
            json!({"ok": true})
        );
        assert_eq!(
            body["generationConfig"]["thinkingConfig"],
            json!({"includeThoughts": true})
        );
    }

    #[test]
    fn a_result_for_an_unknown_call_is_named_by_its_id() {
        let body = body("gemini-2.5-pro", vec![tool("orphan_1", "done")], Vec::new());
        assert_eq!(
            body["contents"],
            json!([{"role": "user", "parts": [
                {"functionResponse": {"name": "orphan_1", "response": {"result": "done"}}}
            ]}])
        );
    }

    #[test]
    fn gemini_3_gets_a_placeholder_signature_for_foreign_calls() {
        let messages = vec![
            Message::User {
                content: "go".into(),
                ts: 1,
                author: None,
                display: None,
            },
            assistant(
                "",
                vec![call("x1", "a", json!({})), call("x2", "b", json!({}))],
                None,
            ),
            tool("x1", "1"),
            tool("x2", "2"),
        ];
        let body = body("gemini-3.1-pro-preview", messages, Vec::new());
        let parts = &body["contents"][1]["parts"];
        assert_eq!(parts[0]["thoughtSignature"], UNSIGNED_CALL);
        assert!(parts[1].get("thoughtSignature").is_none());
    }

    #[test]
    fn empty_parameter_objects_are_left_out() {
        let tools = vec![
            ToolSpec {
                name: "now".into(),
                description: "time".into(),
                parameters: json!({"type": "object", "properties": {}}),
            },
            ToolSpec {
                name: "echo".into(),
                description: "e".into(),
                parameters: json!({"type": "object", "properties": {"t": {"type": "string"}}}),
            },
        ];
        let body = body("gemini-2.5-flash", Vec::new(), tools);
        let declarations = &body["tools"][0]["functionDeclarations"];
        assert_eq!(
            declarations[0],
            json!({"name": "now", "description": "time"})
        );
        assert_eq!(
            declarations[1]["parameters"]["properties"]["t"],
            json!({"type": "string"})
        );
    }
}
