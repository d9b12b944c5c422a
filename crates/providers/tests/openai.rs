//! The OpenAI-compatible Chat Completions client against a mock gateway: recorded-shape SSE
//! streams in, the request it sent asserted.

use std::time::Duration;

use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_protocol::{
    Actor, ContentPart, FileData, ImageUrl, Message, NoticeKind, ProviderState, SessionId,
    TokenUsage, ToolCall, ToolSpec, UserContent,
};
use workmate_providers::openai::OpenAiProvider;
use workmate_providers::{
    AssistantTurn, FinishReason, ModelProvider, ModelRequest, ModelStream, ProviderError,
    ProviderErrorKind, ProviderKind, ProviderSettings, StreamEvent,
};

const ENDPOINT: &str = "/v1/chat/completions";

/// An SSE body: one `data:` event per chunk, then `[DONE]`.
fn sse(chunks: &[Value]) -> String {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

/// A chunk with one choice carrying `delta`.
fn delta(delta: Value) -> Value {
    let mut chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
                           "choices": [{"index": 0, "finish_reason": null}]});
    chunk["choices"][0]["delta"] = delta;
    chunk
}

/// The chunk that ends the choice.
fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// A fragment of tool call `index`.
fn call_delta(index: u64, id: Option<&str>, name: Option<&str>, arguments: &str) -> Value {
    let mut call = json!({"index": index, "function": {"arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    delta(json!({"tool_calls": [call]}))
}

async fn gateway(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

async fn streaming_gateway(chunks: &[Value]) -> MockServer {
    gateway(ResponseTemplate::new(200).set_body_raw(sse(chunks), "text/event-stream")).await
}

fn provider(server: &MockServer) -> OpenAiProvider {
    let mut settings = ProviderSettings::new(
        "gateway",
        ProviderKind::Openai,
        format!("{}/v1", server.uri()),
    );
    settings.api_key = Some(SecretString::from("sk-test-key"));
    settings.headers = vec![("X-Cost-Center".into(), "ops".into())];
    OpenAiProvider::new(settings).unwrap()
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("The {name} tool."),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

fn user(content: impl Into<UserContent>) -> Message {
    Message::User {
        content: content.into(),
        ts: 1,
        author: None,
        display: None,
    }
}

fn request(messages: Vec<Message>, tools: Vec<ToolSpec>) -> ModelRequest {
    ModelRequest {
        session_id: SessionId::new(),
        model: "gpt-test".into(),
        messages,
        tools,
    }
}

fn hello() -> ModelRequest {
    request(vec![user("hello")], Vec::new())
}

/// Everything a stream delivered, and the error it ended with.
#[derive(Debug)]
struct Drained {
    events: Vec<StreamEvent>,
    error: Option<ProviderError>,
}

impl Drained {
    fn turn(&self) -> &AssistantTurn {
        match self.events.last() {
            Some(StreamEvent::Completed(turn)) => turn,
            other => panic!(
                "expected a completed turn, got {other:?} ({:?})",
                self.error
            ),
        }
    }

    fn error(&self) -> &ProviderError {
        self.error.as_ref().expect("the stream should have failed")
    }
}

async fn drain(mut stream: ModelStream) -> Drained {
    let mut drained = Drained {
        events: Vec::new(),
        error: None,
    };
    let read = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => drained.events.push(event),
                Err(error) => {
                    drained.error = Some(error);
                    break;
                }
            }
        }
        // Nothing may follow the end of a stream.
        assert!(
            stream.next().await.is_none(),
            "events after the end of the stream"
        );
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the stream did not end");
    drained
}

#[tokio::test]
async fn text_and_reasoning_stream_and_usage_comes_from_the_last_chunk() {
    let server = streaming_gateway(&[
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"reasoning_content": "Think"})),
        delta(json!({"reasoning": " harder."})),
        delta(json!({"content": "Hello"})),
        delta(json!({"content": " world", "reasoning_content": null})),
        finish("stop"),
        json!({"id": "chatcmpl-1", "choices": [], "usage": {
            "prompt_tokens": 1000, "completion_tokens": 42, "total_tokens": 1042,
            "prompt_tokens_details": {"cached_tokens": 600}}}),
    ])
    .await;
    let drained = drain(provider(&server).stream(hello())).await;

    assert_eq!(drained.error, None);
    let expected_turn = AssistantTurn {
        text: "Hello world".into(),
        reasoning: Some("Think harder.".into()),
        tool_calls: Vec::new(),
        finish_reason: FinishReason::Stop,
        usage: Some(TokenUsage {
            model: "gpt-test".into(),
            input: 400,
            output: 42,
            cache_read: 600,
            cache_write: 0,
        }),
        provider_state: ProviderState::default(),
    };
    assert_eq!(
        drained.events,
        [
            StreamEvent::ReasoningDelta("Think".into()),
            StreamEvent::ReasoningDelta(" harder.".into()),
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(" world".into()),
            StreamEvent::Completed(expected_turn),
        ]
    );
}

#[tokio::test]
async fn tool_call_fragments_are_joined_by_index() {
    let server = streaming_gateway(&[
        delta(json!({"role": "assistant", "content": null})),
        call_delta(0, Some("call_a"), Some("read_file"), ""),
        call_delta(0, None, None, "{\"pa"),
        call_delta(1, Some("call_b"), Some("shell"), "{\"command\":"),
        call_delta(0, None, None, "th\": \"READ"),
        call_delta(1, None, None, " \"ls -la\"}"),
        call_delta(0, None, None, "ME.md\"}"),
        finish("tool_calls"),
    ])
    .await;
    let request = request(vec![user("look")], vec![tool("read_file"), tool("shell")]);
    let drained = drain(provider(&server).stream(request)).await;

    assert_eq!(
        drained.events.len(),
        1,
        "only the completed turn: {:?}",
        drained.events
    );
    let turn = drained.turn();
    assert_eq!(
        turn.tool_calls,
        [
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: json!({"path": "README.md"}),
            },
            ToolCall {
                id: "call_b".into(),
                name: "shell".into(),
                arguments: json!({"command": "ls -la"}),
            },
        ]
    );
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
    assert_eq!(turn.text, "");
    assert_eq!(turn.usage, None, "no usage chunk, no usage");
}

#[tokio::test]
async fn unparseable_arguments_are_kept_raw() {
    let server = streaming_gateway(&[
        call_delta(
            0,
            Some("call_cut"),
            Some("write_file"),
            "{\"path\": \"a.txt\", \"body\": \"lo",
        ),
        call_delta(0, None, None, "ng text"),
        finish("length"),
    ])
    .await;
    let request = request(vec![user("write")], vec![tool("write_file")]);
    let drained = drain(provider(&server).stream(request)).await;

    let turn = drained.turn();
    assert_eq!(turn.finish_reason, FinishReason::Length);
    let [call] = turn.tool_calls.as_slice() else {
        panic!("expected one call, got {:?}", turn.tool_calls);
    };
    assert_eq!(
        call.arguments,
        json!({"_raw": "{\"path\": \"a.txt\", \"body\": \"long text"})
    );
    assert_eq!(
        call.raw_arguments(),
        Some("{\"path\": \"a.txt\", \"body\": \"long text")
    );
}

#[tokio::test]
async fn an_error_mid_stream_ends_it_after_the_text_so_far() {
    let server = streaming_gateway(&[
        delta(json!({"content": "Partial answer"})),
        json!({"error": {"message": "The server is overloaded, try again later.",
                         "type": "server_error", "code": "overloaded"}}),
        delta(json!({"content": " never delivered"})),
    ])
    .await;
    let drained = drain(provider(&server).stream(hello())).await;

    assert_eq!(
        drained.events,
        [StreamEvent::TextDelta("Partial answer".into())]
    );
    let error = drained.error();
    assert_eq!(error.kind, ProviderErrorKind::Unavailable);
    assert!(error.message.contains("overloaded"), "{}", error.message);
}

#[tokio::test]
async fn a_malformed_chunk_is_an_error_not_a_panic() {
    let body =
        "data: {\"choices\": [{\"delta\": {\"content\": \"ok\"}}]}\n\ndata: {\"choices\": [\n\n";
    let server = gateway(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")).await;
    let drained = drain(provider(&server).stream(hello())).await;

    assert_eq!(drained.events, [StreamEvent::TextDelta("ok".into())]);
    assert_eq!(drained.error().kind, ProviderErrorKind::Other);
    assert!(drained.error().message.contains("malformed stream chunk"));
}

#[tokio::test]
async fn a_stream_cut_off_before_the_end_fails() {
    let body = "data: {\"choices\": [{\"delta\": {\"content\": \"half an ans\"}}]}\n\n";
    let server = gateway(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")).await;
    let drained = drain(provider(&server).stream(hello())).await;

    assert_eq!(
        drained.events,
        [StreamEvent::TextDelta("half an ans".into())]
    );
    assert_eq!(drained.error().kind, ProviderErrorKind::Unavailable);
}

#[tokio::test]
async fn error_statuses_become_kinds() {
    let cases = [
        (
            ResponseTemplate::new(429)
                .insert_header("Retry-After", "7")
                .set_body_string(
                    r#"{"error": {"message": "Rate limit reached", "type": "requests"}}"#,
                ),
            ProviderErrorKind::RateLimited,
            Some(Duration::from_secs(7)),
        ),
        (
            ResponseTemplate::new(503).set_body_string("upstream overloaded"),
            ProviderErrorKind::Unavailable,
            None,
        ),
        (
            ResponseTemplate::new(401)
                .set_body_string(r#"{"error": {"message": "Incorrect API key provided"}}"#),
            ProviderErrorKind::Access,
            None,
        ),
    ];
    for (response, kind, retry_after) in cases {
        let server = gateway(response).await;
        let drained = drain(provider(&server).stream(hello())).await;
        assert!(drained.events.is_empty(), "{:?}", drained.events);
        let error = drained.error();
        assert_eq!(
            (error.kind, error.retry_after),
            (kind, retry_after),
            "{error:?}"
        );
        assert!(
            !error.message.contains("sk-test-key"),
            "the key leaked: {}",
            error.message
        );
    }
}

/// Every object key anywhere in `value`.
fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                out.push(key.clone());
                keys(inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_request_is_converted_to_the_wire_format() {
    let server = streaming_gateway(&[delta(json!({"content": "ok"})), finish("stop")]).await;
    let messages = vec![
        Message::System {
            content: "You are a coworker.".into(),
        },
        Message::User {
            content: "/standup".into(),
            ts: 1,
            author: Some(Actor::named("u1", "Ada")),
            display: Some("Run skill: standup".into()),
        },
        user(UserContent::Parts(vec![
            ContentPart::Text {
                text: "See these".into(),
            },
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,AA==".into(),
                },
            },
            ContentPart::File {
                file: FileData {
                    filename: "q3.pdf".into(),
                    file_data: "data:application/pdf;base64,JVBE".into(),
                    text: None,
                },
            },
        ])),
        Message::Assistant {
            content: String::new(),
            ts: 2,
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a.txt"}),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "shell".into(),
                    arguments: json!({"_raw": "{\"command\": \"l"}),
                },
            ],
            reasoning: Some("private thoughts".into()),
            usage: Some(TokenUsage::default()),
            provider_state: Box::new(ProviderState {
                openai: Some(json!([{"type": "reasoning", "encrypted_content": "x"}])),
                anthropic: Some(json!([{"type": "thinking", "signature": "sig"}])),
                gemini: Some(json!({"thought_signature": "g"})),
            }),
        },
        Message::Tool {
            tool_call_id: "call_1".into(),
            content: "file body".into(),
            ts: 3,
            display: Some(json!({"hidden_by_filters": 2})),
        },
        Message::Tool {
            tool_call_id: "call_2".into(),
            content: "error: arguments were not a JSON object".into(),
            ts: 3,
            display: None,
        },
        Message::Notice {
            kind: NoticeKind::ModelSwitch,
            text: Some("Now using gpt-test".into()),
            ts: 4,
        },
        Message::Assistant {
            content: "Done.".into(),
            ts: 5,
            tool_calls: Vec::new(),
            reasoning: None,
            usage: None,
            provider_state: Box::default(),
        },
        user("thanks"),
    ];
    let drained = drain(provider(&server).stream(request(messages, vec![tool("read_file")]))).await;
    assert_eq!(drained.turn().text, "ok");

    let received = server.received_requests().await.unwrap();
    let [sent] = received.as_slice() else {
        panic!("expected one request, got {}", received.len());
    };
    let header = |name: &str| sent.headers.get(name).and_then(|v| v.to_str().ok());
    assert_eq!(header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(header("x-cost-center"), Some("ops"));
    assert_eq!(header("content-type"), Some("application/json"));

    let body: Value = sent.body_json().unwrap();
    assert_eq!(
        body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You are a coworker."},
                {"role": "user", "content": "/standup"},
                {"role": "user", "content": [
                    {"type": "text", "text": "See these"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
                    {"type": "file", "file": {"filename": "q3.pdf",
                                              "file_data": "data:application/pdf;base64,JVBE"}},
                ]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "shell", "arguments": "{\"command\": \"l"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "file body"},
                {"role": "tool", "tool_call_id": "call_2",
                 "content": "error: arguments were not a JSON object"},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": "thanks"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file",
                "description": "The read_file tool.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
    let mut all = Vec::new();
    keys(&body, &mut all);
    for forbidden in [
        "_display",
        "display",
        "reasoning",
        "usage",
        "ts",
        "author",
        "_anthropic",
        "_gemini",
        "_openai",
        "kind",
    ] {
        assert!(
            !all.iter().any(|k| k == forbidden),
            "`{forbidden}` was sent"
        );
    }
}

#[tokio::test]
async fn without_a_key_no_authorization_is_sent() {
    let server = streaming_gateway(&[delta(json!({"content": "hi"})), finish("stop")]).await;
    let settings = ProviderSettings::new(
        "local",
        ProviderKind::Openai,
        format!("{}/v1/", server.uri()),
    );
    let provider = OpenAiProvider::new(settings).unwrap();
    let drained = drain(provider.stream(hello())).await;
    assert_eq!(drained.turn().text, "hi");

    let received = server.received_requests().await.unwrap();
    assert_eq!(
        received.len(),
        1,
        "the trailing slash of base_url still reaches {ENDPOINT}"
    );
    assert!(received[0].headers.get("authorization").is_none());
    let body: Value = received[0].body_json().unwrap();
    assert!(
        body.get("tools").is_none(),
        "no tools offered, no `tools` key: {body}"
    );
}

#[tokio::test]
async fn tool_calls_written_as_text_are_salvaged() {
    let text = [
        "I'll read the notes.\n<tool_",
        "call>\n{\"name\": \"read_file\", \"arg",
        "uments\": {\"path\": \"notes.md\"}}\n</tool_call>",
    ];
    let mut chunks: Vec<Value> = text.iter().map(|t| delta(json!({"content": t}))).collect();
    chunks.push(finish("stop"));
    let server = streaming_gateway(&chunks).await;
    let offered = request(vec![user("notes?")], vec![tool("read_file")]);
    let drained = drain(provider(&server).stream(offered)).await;

    let turn = drained.turn();
    assert_eq!(turn.text, "I'll read the notes.");
    assert_eq!(
        turn.tool_calls,
        [ToolCall {
            id: "salvaged_0".into(),
            name: "read_file".into(),
            arguments: json!({"path": "notes.md"}),
        }]
    );
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);

    // A tool that was not offered is not called, whatever the text says.
    let not_offered = request(vec![user("notes?")], vec![tool("shell")]);
    let drained = drain(provider(&server).stream(not_offered)).await;
    let turn = drained.turn();
    assert_eq!(turn.text, text.concat());
    assert!(turn.tool_calls.is_empty());
    assert_eq!(turn.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn a_bad_base_url_is_refused_up_front() {
    let settings = ProviderSettings::new("gw", ProviderKind::Openai, "gateway.internal/v1");
    let error = OpenAiProvider::new(settings).unwrap_err();
    assert!(error.message.contains("base_url"), "{}", error.message);
}
