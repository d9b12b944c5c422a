//! The Gemini client against a mock gateway: what it streams back and what it sends.

use std::time::Duration;

use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_protocol::{
    Message, NoticeKind, ProviderState, SessionId, TokenUsage, ToolCall, ToolSpec,
};
use workmate_providers::gemini::GeminiProvider;
use workmate_providers::{
    FinishReason, ModelProvider, ModelRequest, ProviderErrorKind, ProviderKind, ProviderSettings,
    StreamEvent,
};

use crate::support::drain;

const MODEL: &str = "gemini-2.5-pro";
const ENDPOINT: &str = "/v1beta/models/gemini-2.5-pro:streamGenerateContent";

/// An SSE body with one `data:` event per chunk.
fn sse(chunks: &[Value]) -> String {
    chunks
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect()
}

async fn gateway(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .and(query_param("alt", "sse"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

fn streaming(chunks: &[Value]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(sse(chunks), "text/event-stream")
}

fn provider(server: &MockServer, key: Option<&str>) -> GeminiProvider {
    let mut settings = ProviderSettings::new("gemini", ProviderKind::Gemini, server.uri());
    settings.api_key = key.map(|k| SecretString::from(k.to_owned()));
    settings.headers = vec![("x-tenant".into(), "acme".into())];
    GeminiProvider::new(settings).unwrap()
}

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
        ts: 1,
        author: None,
        display: None,
    }
}

fn request(messages: Vec<Message>, tools: Vec<ToolSpec>) -> ModelRequest {
    ModelRequest {
        session_id: SessionId::new(),
        model: MODEL.into(),
        messages,
        tools,
    }
}

fn text_chunk(text: &str) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]})
}

#[tokio::test]
async fn text_thoughts_and_usage_stream_into_a_turn() {
    let server = gateway(streaming(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Weighing the options.", "thought": true}
        ]}}]}),
        text_chunk("Hello, "),
        json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "world."}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 40,
                "candidatesTokenCount": 20, "thoughtsTokenCount": 5, "totalTokenCount": 125}
        }),
    ]))
    .await;
    let played =
        drain(provider(&server, Some("k")).stream(request(vec![user("hi")], Vec::new()))).await;

    assert!(played.error.is_none(), "{:?}", played.error);
    assert_eq!(
        played.events[..3],
        [
            StreamEvent::ReasoningDelta("Weighing the options.".into()),
            StreamEvent::TextDelta("Hello, ".into()),
            StreamEvent::TextDelta("world.".into()),
        ]
    );
    let reply = played.reply();
    assert_eq!(reply.text, "Hello, world.");
    assert_eq!(reply.reasoning.as_deref(), Some("Weighing the options."));
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    assert!(reply.tool_calls.is_empty());
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            model: "gemini:gemini-2.5-pro".into(),
            input: 60,
            output: 25,
            cache_read: 40,
            cache_write: 0,
        })
    );
}

#[tokio::test]
async fn function_calls_get_unique_ids() {
    let server = gateway(streaming(&[json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "read_file", "args": {"path": "b.txt"}}}
        ]}, "finishReason": "STOP"}]
    })]))
    .await;
    let provider = provider(&server, Some("k"));
    let first = drain(provider.stream(request(vec![user("read both")], Vec::new()))).await;
    let second = drain(provider.stream(request(vec![user("again")], Vec::new()))).await;

    let reply = first.reply();
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    let [a, b] = &reply.tool_calls[..] else {
        panic!("expected two calls, got {:?}", reply.tool_calls);
    };
    assert_eq!(
        (a.name.as_str(), &a.arguments),
        ("read_file", &json!({"path": "a.txt"}))
    );
    assert_eq!(b.arguments, json!({"path": "b.txt"}));
    assert!(!a.id.as_str().is_empty());
    assert_ne!(a.id, b.id);
    let later: Vec<_> = second
        .reply()
        .tool_calls
        .iter()
        .map(|c| c.id.clone())
        .collect();
    assert!(
        !later.contains(&a.id) && !later.contains(&b.id),
        "ids repeat across calls"
    );
    assert_eq!(
        reply.provider_state.gemini,
        Some(json!({"thought_signatures": {a.id.as_str(): "c2ln"}}))
    );
}

#[tokio::test]
async fn an_error_mid_stream_fails_the_call_after_the_text() {
    let server = gateway(streaming(&[
        text_chunk("Partial"),
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
    ]))
    .await;
    let played =
        drain(provider(&server, Some("k")).stream(request(vec![user("hi")], Vec::new()))).await;

    assert_eq!(played.events, [StreamEvent::TextDelta("Partial".into())]);
    let error = played.error.as_ref().expect("the stream should fail");
    assert_eq!(error.kind, ProviderErrorKind::Unavailable);
    assert!(
        error.message.contains("The model is overloaded."),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn http_errors_keep_their_kind_and_retry_after() {
    let limited = gateway(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "7")
            .set_body_json(json!({"error": {"code": 429, "message": "Resource has been exhausted.", "status": "RESOURCE_EXHAUSTED"}})),
    )
    .await;
    let played =
        drain(provider(&limited, None).stream(request(vec![user("hi")], Vec::new()))).await;
    let error = played.error.expect("429 should fail");
    assert_eq!(error.kind, ProviderErrorKind::RateLimited);
    assert_eq!(error.retry_after, Some(Duration::from_secs(7)));
    let sent = &limited.received_requests().await.unwrap()[0];
    assert!(
        sent.headers.get("x-goog-api-key").is_none(),
        "no key configured, none sent"
    );

    let down = gateway(ResponseTemplate::new(503).set_body_string("upstream unavailable")).await;
    let played =
        drain(provider(&down, Some("k")).stream(request(vec![user("hi")], Vec::new()))).await;
    assert_eq!(
        played.error.expect("503 should fail").kind,
        ProviderErrorKind::Unavailable
    );
}

#[tokio::test]
async fn the_request_is_converted_for_gemini() {
    let server = gateway(streaming(&[json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
    })]))
    .await;
    let history = vec![
        Message::System {
            content: "You are a coworker.".into(),
        },
        Message::User {
            content: "Find the report".into(),
            ts: 1,
            author: None,
            display: Some("DISPLAY-ONLY".into()),
        },
        Message::Assistant {
            content: "Looking.".into(),
            ts: 2,
            tool_calls: vec![
                ToolCall {
                    id: "c1".into(),
                    name: "search".into(),
                    arguments: json!({"q": "report"}),
                },
                ToolCall {
                    id: "c2".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "r.md"}),
                },
            ],
            reasoning: Some("PRIVATE-THOUGHTS".into()),
            usage: Some(TokenUsage {
                model: "gemini:x".into(),
                input: 1,
                output: 2,
                cache_read: 0,
                cache_write: 0,
            }),
            provider_state: Box::new(ProviderState {
                gemini: Some(json!({"thought_signatures": {"c1": "sig-1"}})),
                openai: Some(json!({"items": ["OPENAI-STATE"]})),
                anthropic: Some(json!([{"type": "thinking", "signature": "ANTHROPIC-STATE"}])),
            }),
        },
        Message::Tool {
            tool_call_id: "c1".into(),
            content: "[\"r.md\"]".into(),
            ts: 3,
            display: Some(json!({"shown": "TOOL-DISPLAY"})),
        },
        Message::Tool {
            tool_call_id: "c2".into(),
            content: "{\"text\": \"Q3 numbers\"}".into(),
            ts: 3,
            display: None,
        },
        Message::Notice {
            kind: NoticeKind::Interrupted,
            text: Some("NOTICE-TEXT".into()),
            ts: 4,
        },
        user("Also summarize it."),
    ];
    let tools = vec![ToolSpec {
        name: "search".into(),
        description: "Search files.".into(),
        parameters: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "$defs": {"Scope": {"type": "string", "enum": ["all", "recent"]}},
            "properties": {
                "q": {"type": "string", "description": "What to find"},
                "folder": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "scope": {"$ref": "#/$defs/Scope"}
            },
            "required": ["q"]
        }),
    }];
    let played = drain(provider(&server, Some("test-key")).stream(request(history, tools))).await;
    assert_eq!(played.reply().text, "ok");

    let sent = &server.received_requests().await.unwrap()[0];
    assert!(
        sent.url
            .path()
            .contains("models/gemini-2.5-pro:streamGenerateContent"),
        "{}",
        sent.url
    );
    assert_eq!(sent.url.query(), Some("alt=sse"));
    assert_eq!(sent.headers.get("x-goog-api-key").unwrap(), "test-key");
    assert_eq!(sent.headers.get("x-tenant").unwrap(), "acme");
    let raw = String::from_utf8(sent.body.clone()).unwrap();
    for leaked in [
        "_display",
        "DISPLAY-ONLY",
        "TOOL-DISPLAY",
        "reasoning",
        "PRIVATE-THOUGHTS",
        "usage",
        "_openai",
        "OPENAI-STATE",
        "_anthropic",
        "ANTHROPIC-STATE",
        "NOTICE-TEXT",
        "test-key",
    ] {
        assert!(!raw.contains(leaked), "{leaked} was sent: {raw}");
    }

    let body: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are a coworker."}]})
    );
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Find the report"}]},
            {"role": "model", "parts": [
                {"text": "Looking."},
                {"functionCall": {"name": "search", "args": {"q": "report"}}, "thoughtSignature": "sig-1"},
                {"functionCall": {"name": "read_file", "args": {"path": "r.md"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "search", "response": {"result": "[\"r.md\"]"}}},
                {"functionResponse": {"name": "read_file", "response": {"text": "Q3 numbers"}}},
                {"text": "Also summarize it."}
            ]}
        ])
    );
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [{
            "name": "search",
            "description": "Search files.",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "What to find"},
                    "folder": {"type": "string", "nullable": true},
                    "scope": {"type": "string", "enum": ["all", "recent"]}
                },
                "required": ["q"]
            }
        }]}])
    );
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 32_000);
}

#[tokio::test]
async fn a_stream_cut_short_is_an_error() {
    let server = gateway(streaming(&[text_chunk("Half an ans")])).await;
    let played =
        drain(provider(&server, Some("k")).stream(request(vec![user("hi")], Vec::new()))).await;
    assert_eq!(played.text(), "Half an ans");
    assert_eq!(
        played.error.expect("no finish reason").kind,
        ProviderErrorKind::Unavailable
    );
}

#[test]
fn capabilities_are_guessed_for_gemini() {
    let settings = ProviderSettings::new("gemini", ProviderKind::Gemini, "http://127.0.0.1:9");
    let caps = GeminiProvider::new(settings).unwrap().capabilities(MODEL);
    assert!(caps.tools && caps.vision && caps.pdf);
    assert_eq!(caps.context_window, 1_000_000);
}
