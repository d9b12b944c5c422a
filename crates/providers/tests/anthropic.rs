//! The Anthropic client against a mock gateway: what it streams back and what it sends.

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_protocol::{
    ContentPart, FileData, ImageUrl, Message, ProviderState, SessionId, ToolCall, ToolSpec,
    UserContent,
};
use workmate_providers::anthropic::AnthropicProvider;
use workmate_providers::{
    FinishReason, ModelProvider, ModelRequest, ProviderErrorKind, ProviderKind, ProviderSettings,
    StreamEvent,
};

use crate::support::{Played, drain};

const KEY: &str = "sk-ant-test-key";

/// An SSE body: each event as `event: <type>` plus its JSON data.
fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn message_start(input: u64, cache_write: u64, cache_read: u64) -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [],
        "model": "claude-test", "stop_reason": null,
        "usage": {"input_tokens": input, "output_tokens": 1,
                  "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read}
    }})
}

fn block_start(index: usize, block: Value) -> Value {
    let mut event = json!({"type": "content_block_start", "index": index});
    event["content_block"] = block;
    event
}

fn delta(index: usize, delta: Value) -> Value {
    let mut event = json!({"type": "content_block_delta", "index": index});
    event["delta"] = delta;
    event
}

fn block_stop(index: usize) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_end(stop_reason: &str, output: u64) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": output}}),
        json!({"type": "message_stop"}),
    ]
}

/// A reply that thinks, then answers.
fn thinking_reply() -> String {
    let mut events = vec![
        message_start(12, 100, 2000),
        block_start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "The user "}),
        ),
        json!({"type": "ping"}),
        delta(0, json!({"type": "thinking_delta", "thinking": "says hi."})),
        delta(
            0,
            json!({"type": "signature_delta", "signature": "sig-abc"}),
        ),
        block_stop(0),
        block_start(1, json!({"type": "redacted_thinking", "data": "opaque=="})),
        block_stop(1),
        block_start(2, json!({"type": "text", "text": ""})),
        delta(2, json!({"type": "text_delta", "text": "Hello"})),
        delta(2, json!({"type": "text_delta", "text": " there."})),
        block_stop(2),
    ];
    events.extend(message_end("end_turn", 42));
    sse(&events)
}

async fn gateway(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/gateway/anthropic/v1/messages"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

fn streaming(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn provider(server: &MockServer) -> AnthropicProvider {
    let mut settings = ProviderSettings::new(
        "claude",
        ProviderKind::Anthropic,
        format!("{}/gateway/anthropic/", server.uri()),
    );
    settings.api_key = Some(KEY.into());
    settings.headers = vec![("x-gateway-tenant".into(), "acme".into())];
    AnthropicProvider::new(settings).unwrap()
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
        model: "claude-test".into(),
        messages,
        tools,
    }
}

fn hello() -> ModelRequest {
    request(
        vec![
            Message::System {
                content: "Be brief.".into(),
            },
            user("hi"),
        ],
        Vec::new(),
    )
}

async fn call(provider: &AnthropicProvider, request: ModelRequest) -> Played {
    drain(provider.stream(request)).await
}

/// The body of the one request the gateway received.
async fn sent_body(server: &MockServer) -> (Value, String) {
    let requests = server.received_requests().await.unwrap();
    let last = requests.last().expect("the gateway got no request");
    let text = String::from_utf8(last.body.clone()).unwrap();
    (serde_json::from_str(&text).unwrap(), text)
}

#[tokio::test]
async fn thinking_text_and_usage_stream_into_a_turn_with_replay_state() {
    let server = gateway(streaming(thinking_reply())).await;
    let played = call(&provider(&server), hello()).await;
    assert!(played.error.is_none(), "{:?}", played.error);
    assert_eq!(
        played.events[..4],
        [
            StreamEvent::ReasoningDelta("The user ".into()),
            StreamEvent::ReasoningDelta("says hi.".into()),
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(" there.".into()),
        ]
    );
    let reply = played.reply();
    assert_eq!(reply.text, "Hello there.");
    assert_eq!(reply.reasoning.as_deref(), Some("The user says hi."));
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    assert!(reply.tool_calls.is_empty());
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!(usage.model, "claude:claude-test");
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write
        ),
        (12, 42, 2000, 100)
    );
    assert_eq!(
        reply.provider_state.anthropic,
        Some(json!({"thinking_blocks": [
            {"type": "thinking", "thinking": "The user says hi.", "signature": "sig-abc"},
            {"type": "redacted_thinking", "data": "opaque=="},
        ]}))
    );
    assert!(reply.provider_state.openai.is_none() && reply.provider_state.gemini.is_none());
}

#[tokio::test]
async fn tool_arguments_split_over_deltas_parse_into_one_call() {
    let mut events = vec![
        message_start(30, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "Let me look."})),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {}}),
        ),
        delta(1, json!({"type": "input_json_delta", "partial_json": ""})),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"pa"}),
        ),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "th\": \"src/ma"}),
        ),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "in.rs\", \"lines\": [1, 2"}),
        ),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "0]}"}),
        ),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_02", "name": "list_dir", "input": {}}),
        ),
        block_stop(2),
    ];
    events.extend(message_end("tool_use", 55));
    let server = gateway(streaming(sse(&events))).await;
    let played = call(&provider(&server), hello()).await;
    let reply = played.reply();
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(
        reply.tool_calls,
        [
            ToolCall {
                id: "toolu_01".into(),
                name: "read_file".into(),
                arguments: json!({"path": "src/main.rs", "lines": [1, 20]}),
            },
            ToolCall {
                id: "toolu_02".into(),
                name: "list_dir".into(),
                arguments: json!({}),
            },
        ]
    );
    assert!(
        reply.provider_state.is_empty(),
        "no thinking, nothing to replay"
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_fails_after_the_text_so_far() {
    let events = [
        message_start(5, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "Partial"})),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        delta(0, json!({"type": "text_delta", "text": " never seen"})),
    ];
    let server = gateway(streaming(sse(&events))).await;
    let played = call(&provider(&server), hello()).await;
    assert_eq!(played.events, [StreamEvent::TextDelta("Partial".into())]);
    let error = played.error.as_ref().unwrap();
    assert_eq!(error.kind, ProviderErrorKind::Unavailable);
    assert!(error.message.contains("Overloaded"), "{}", error.message);
    assert!(
        error.message.contains("claude:claude-test"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_stream_cut_short_is_unavailable_and_a_json_reply_is_not_a_stream() {
    let events = [
        message_start(5, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "Half"})),
    ];
    let server = gateway(streaming(sse(&events))).await;
    let played = call(&provider(&server), hello()).await;
    assert_eq!(played.text(), "Half");
    assert_eq!(
        played.error.as_ref().unwrap().kind,
        ProviderErrorKind::Unavailable
    );

    let server = gateway(
        ResponseTemplate::new(200)
            .set_body_raw(r#"{"type":"message","content":[]}"#, "application/json"),
    )
    .await;
    let played = call(&provider(&server), hello()).await;
    assert!(played.events.is_empty());
    let error = played.error.as_ref().unwrap();
    assert_eq!(error.kind, ProviderErrorKind::Other);
    assert!(
        error.message.contains("not an Anthropic event stream"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn http_errors_map_to_kinds_and_keep_retry_after() {
    let limited = ResponseTemplate::new(429)
        .insert_header("retry-after", "7")
        .set_body_raw(
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
            "application/json",
        );
    let server = gateway(limited).await;
    let played = call(&provider(&server), hello()).await;
    let error = played.error.as_ref().unwrap();
    assert_eq!(error.kind, ProviderErrorKind::RateLimited);
    assert_eq!(error.retry_after, Some(Duration::from_secs(7)));
    assert!(played.events.is_empty());

    for status in [529, 503] {
        let overloaded = ResponseTemplate::new(status).set_body_raw(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            "application/json",
        );
        let server = gateway(overloaded).await;
        let played = call(&provider(&server), hello()).await;
        let error = played.error.as_ref().unwrap();
        assert_eq!(error.kind, ProviderErrorKind::Unavailable, "HTTP {status}");
        assert_eq!(error.retry_after, None);
    }

    let too_long = ResponseTemplate::new(400).set_body_raw(
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        "application/json",
    );
    let server = gateway(too_long).await;
    let played = call(&provider(&server), hello()).await;
    assert_eq!(
        played.error.unwrap().kind,
        ProviderErrorKind::ContextOverflow
    );
}

/// A history exercising every conversion: tools, two results, steering text, attachments,
/// display-only sidecars and other providers' state.
fn busy_history() -> Vec<Message> {
    vec![
        Message::System {
            content: "You are a coworker.".into(),
        },
        Message::User {
            content: UserContent::Parts(vec![
                ContentPart::Text {
                    text: "What is in these?".into(),
                },
                ContentPart::ImageUrl {
                    image_url: ImageUrl {
                        url: "data:image/png;base64,iVBORw0KGgo=".into(),
                    },
                },
                ContentPart::File {
                    file: FileData {
                        filename: "report.pdf".into(),
                        file_data: "data:application/pdf;base64,JVBERi0xLjQ=".into(),
                        text: None,
                    },
                },
            ]),
            ts: 1,
            author: None,
            display: Some("shown instead".into()),
        },
        Message::Assistant {
            content: "Checking two things.".into(),
            ts: 2,
            tool_calls: vec![
                ToolCall {
                    id: "toolu_a".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a.txt"}),
                },
                ToolCall {
                    id: "toolu_b".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "b.txt"}),
                },
            ],
            reasoning: Some("private musing".into()),
            usage: Some(Default::default()),
            provider_state: Box::new(ProviderState {
                openai: Some(json!({"reasoning_items": ["enc"]})),
                gemini: Some(json!({"thought_signature": "g"})),
                anthropic: None,
            }),
        },
        Message::Tool {
            tool_call_id: "toolu_a".into(),
            content: "alpha".into(),
            ts: 3,
            display: Some(json!({"hidden_by_filters": 2})),
        },
        Message::Notice {
            kind: workmate_protocol::NoticeKind::Error,
            text: Some("a notice".into()),
            ts: 3,
        },
        Message::Tool {
            tool_call_id: "toolu_b".into(),
            content: "beta".into(),
            ts: 4,
            display: None,
        },
        user("Actually, only the first one matters."),
    ]
}

#[tokio::test]
async fn the_request_is_converted_for_anthropic() {
    let server = gateway(streaming(thinking_reply())).await;
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }];
    let played = call(&provider(&server), request(busy_history(), tools)).await;
    assert!(played.error.is_none(), "{:?}", played.error);

    let requests = server.received_requests().await.unwrap();
    let headers = &requests[0].headers;
    assert_eq!(headers["x-api-key"], KEY);
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(headers["x-gateway-tenant"], "acme");
    assert!(headers.get("authorization").is_none());

    let (body, text) = sent_body(&server).await;
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 32000);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a coworker.", "cache_control": ephemeral}])
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "read_file", "description": "Reads a file.", "input_schema":
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}, "title": "report.pdf"},
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking two things."},
                {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b.txt"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "alpha"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "beta"},
                {"type": "text", "text": "Actually, only the first one matters.", "cache_control": ephemeral},
            ]},
        ])
    );
    assert_eq!(text.matches("cache_control").count(), 2, "{text}");
    for leaked in [
        "\"_display\"",
        "\"display\"",
        "\"reasoning\"",
        "\"usage\"",
        "\"_openai\"",
        "\"_gemini\"",
        "\"_anthropic\"",
        "\"ts\"",
        "shown instead",
        "private musing",
        "hidden_by_filters",
        "a notice",
        "reasoning_items",
    ] {
        assert!(!text.contains(leaked), "{leaked} was sent: {text}");
    }
}

#[tokio::test]
async fn thinking_blocks_are_replayed_ahead_of_the_assistant_content() {
    let server = gateway(streaming(thinking_reply())).await;
    let provider = provider(&server);
    let first = call(&provider, hello()).await;
    let reply = first.reply().clone();

    let mut history = hello().messages;
    history.push(Message::Assistant {
        content: reply.text.clone(),
        ts: 2,
        tool_calls: vec![ToolCall {
            id: "toolu_x".into(),
            name: "shell".into(),
            arguments: ToolCall::parse_arguments("{\"command\": \"ls"),
        }],
        reasoning: reply.reasoning.clone(),
        usage: reply.usage.clone(),
        provider_state: Box::new(reply.provider_state.clone()),
    });
    history.push(Message::Tool {
        tool_call_id: "toolu_x".into(),
        content: "error: the arguments were not valid JSON".into(),
        ts: 3,
        display: None,
    });
    let second = call(&provider, request(history, Vec::new())).await;
    assert!(second.error.is_none(), "{:?}", second.error);

    let (body, _) = sent_body(&server).await;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user says hi.", "signature": "sig-abc"},
            {"type": "redacted_thinking", "data": "opaque=="},
            {"type": "text", "text": "Hello there."},
            {"type": "tool_use", "id": "toolu_x", "name": "shell", "input": {}},
        ]})
    );
    assert_eq!(
        body["messages"][2]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[tokio::test]
async fn settings_of_another_kind_are_refused_and_the_key_stays_hidden() {
    let mut settings = ProviderSettings::new("x", ProviderKind::Openai, "http://localhost:1");
    assert_eq!(
        AnthropicProvider::new(settings.clone()).unwrap_err().kind,
        ProviderErrorKind::Other
    );
    settings.kind = ProviderKind::Anthropic;
    settings.api_key = Some(KEY.into());
    let provider = AnthropicProvider::new(settings).unwrap();
    assert!(!format!("{provider:?}").contains(KEY));
    assert!(provider.capabilities("claude-sonnet-4-6").pdf);
}
