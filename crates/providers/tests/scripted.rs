//! The scripted provider end to end.

use std::time::Duration;

use serde_json::json;
use workmate_protocol::{Message, SessionId, ToolCall};
use workmate_providers::{
    FinishReason, ModelProvider, ModelRequest, ProviderErrorKind, ScriptError, ScriptedProvider,
    StreamEvent,
};

use crate::support::{drain, play, request};

fn provider(json: &serde_json::Value) -> ScriptedProvider {
    ScriptedProvider::from_json(&json.to_string()).unwrap()
}

#[tokio::test]
async fn deltas_concatenate_to_the_text_and_follow_the_reasoning() {
    let text = (1..=20)
        .map(|n| format!("word{n}"))
        .collect::<Vec<_>>()
        .join(" ");
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [
        {"reasoning": "think  it over", "text": text, "usage": {"input": 7, "output": 3}}
    ]}]}));
    let played = play(&p, &SessionId::new(), "hello", 0).await;

    let kinds: Vec<&str> = played
        .events
        .iter()
        .map(|e| match e {
            StreamEvent::ReasoningDelta(_) => "reasoning",
            StreamEvent::TextDelta(_) => "text",
            StreamEvent::Completed(_) => "completed",
        })
        .collect();
    let mut expected = vec!["reasoning"; 3];
    expected.extend(["text"; 20]);
    expected.push("completed");
    assert_eq!(kinds, expected);
    assert_eq!(
        played.events[0],
        StreamEvent::ReasoningDelta("think  ".into())
    );
    assert_eq!(played.text(), text);

    let reply = played.reply();
    assert_eq!(reply.text, text);
    assert_eq!(reply.reasoning.as_deref(), Some("think  it over"));
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!(
        (usage.model.as_str(), usage.input, usage.output),
        ("demo", 7, 3)
    );
    assert!(reply.provider_state.is_empty());
}

#[tokio::test]
async fn tool_calls_get_ids_unique_within_the_session() {
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [
        {"tool_calls": [{"name": "ls", "arguments": {"path": "."}}, {"name": "pwd"}]},
        {"tool_calls": [{"name": "ls"}], "finish_reason": "length"},
    ]}]}));
    let session = SessionId::new();
    let first = play(&p, &session, "hi", 0).await;
    let second = play(&p, &session, "hi", 1).await;

    let first = first.reply();
    assert_eq!(first.text, "");
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    let ids: Vec<&str> = first.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_0_0", "call_0_1"]);
    assert_eq!(first.tool_calls[0].arguments, json!({"path": "."}));
    assert_eq!(first.tool_calls[1].arguments, json!({}));
    assert_eq!(second.reply().tool_calls[0].id.as_str(), "call_1_0");
    assert_eq!(second.reply().finish_reason, FinishReason::Length);
}

#[tokio::test]
async fn sessions_walk_their_turns_independently() {
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [
        {"text": "one"}, {"text": "two"}
    ]}]}));
    let (a, b) = (SessionId::new(), SessionId::new());
    assert_eq!(play(&p, &a, "hi", 0).await.reply().text, "one");
    assert_eq!(play(&p, &a, "hi", 1).await.reply().text, "two");
    assert_eq!(play(&p, &b, "hi", 0).await.reply().text, "one");
    assert_eq!(
        play(&p, &a, "hi", 2).await.error_message(),
        "script exhausted"
    );
    assert_eq!(play(&p, &b, "hi", 1).await.reply().text, "two");
}

#[tokio::test]
async fn a_new_instance_resumes_from_the_assistant_count() {
    let script = json!({"conversations": [{"when": "*", "turns": [
        {"text": "one"}, {"text": "two"}, {"text": "three"}
    ]}]});
    let session = SessionId::new();
    let before = provider(&script);
    assert_eq!(play(&before, &session, "hi", 0).await.reply().text, "one");

    let after_restart = provider(&script);
    assert_eq!(
        play(&after_restart, &session, "hi", 2).await.reply().text,
        "three"
    );
    // Once seen, the instance's own cursor counts, not the history.
    assert_eq!(
        play(&after_restart, &session, "hi", 0)
            .await
            .error_message(),
        "script exhausted"
    );
}

#[tokio::test]
async fn exhausted_and_failing_turns_still_advance() {
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [
        {"text": "partial answer", "fail_with": "upstream went away"},
        {"text": "recovered"}
    ]}]}));
    let session = SessionId::new();
    let failed = play(&p, &session, "hi", 0).await;
    assert_eq!(failed.text(), "partial answer");
    assert!(
        !failed
            .events
            .iter()
            .any(|e| matches!(e, StreamEvent::Completed(_)))
    );
    let error = failed.error.as_ref().unwrap();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ProviderErrorKind::Other, "upstream went away")
    );

    assert_eq!(play(&p, &session, "hi", 0).await.reply().text, "recovered");
    let exhausted = play(&p, &session, "hi", 0).await;
    assert!(exhausted.events.is_empty());
    assert_eq!(exhausted.error.unwrap().kind, ProviderErrorKind::Other);
}

#[tokio::test]
async fn when_selects_the_first_matching_conversation_and_star_catches_the_rest() {
    let p = provider(&json!({"conversations": [
        {"when": "deploy", "turns": [{"text": "deploying"}]},
        {"when": "deploy the app", "turns": [{"text": "never chosen"}]},
        {"when": "*", "turns": [{"text": "fallback"}]},
        {"when": "report", "turns": [{"text": "after the star"}]},
    ]}));
    let text = |opening: &'static str| {
        let p = &p;
        async move {
            play(p, &SessionId::new(), opening, 0)
                .await
                .reply()
                .text
                .clone()
        }
    };
    assert_eq!(text("please deploy the app").await, "deploying");
    assert_eq!(text("write the report").await, "fallback");

    let strict = provider(&json!({"conversations": [{"when": "deploy", "turns": [{}]}]}));
    let played = play(&strict, &SessionId::new(), "write the report", 0).await;
    assert!(
        played
            .error_message()
            .starts_with("no scripted conversation matches"),
        "{}",
        played.error_message()
    );
    assert!(played.error_message().contains("write the report"));
}

#[tokio::test]
async fn selection_uses_the_first_user_message_only() {
    let p = provider(&json!({"conversations": [
        {"when": "deploy", "turns": [{"text": "a"}, {"text": "deploying"}]},
        {"when": "*", "turns": [{"text": "fallback"}]},
    ]}));
    // The history's second user message mentions "deploy"; the first does not.
    let mut req = request(&SessionId::new(), "hello", 1);
    req.messages.push(workmate_protocol::Message::User {
        content: "now deploy".into(),
        ts: 9,
        author: None,
        display: None,
    });
    let played = drain(p.stream(req)).await;
    assert_eq!(played.error_message(), "script exhausted");
}

#[tokio::test]
async fn raw_arguments_make_mangled_calls() {
    let p = provider(
        &json!({"conversations": [{"when": "*", "turns": [{"tool_calls": [
            {"name": "write_file", "raw_arguments": "{\"path\": \"a.txt\", \"content\": "},
            {"name": "read_file", "raw_arguments": "{\"path\": \"b.txt\"}"},
        ]}]}]}),
    );
    let played = play(&p, &SessionId::new(), "hi", 0).await;
    let calls = &played.reply().tool_calls;
    assert_eq!(
        calls[0].raw_arguments(),
        Some("{\"path\": \"a.txt\", \"content\": ")
    );
    assert_eq!(
        calls[0].arguments,
        json!({ ToolCall::RAW_KEY: "{\"path\": \"a.txt\", \"content\": " })
    );
    assert_eq!(calls[1].arguments, json!({"path": "b.txt"}));
    assert_eq!(calls[1].raw_arguments(), None);
}

#[tokio::test(start_paused = true)]
async fn chunk_delay_paces_the_pieces() {
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [
        {"text": "a b c", "chunk_delay_ms": 100}
    ]}]}));
    let start = tokio::time::Instant::now();
    let played = play(&p, &SessionId::new(), "hi", 0).await;
    assert_eq!(played.text(), "a b c");
    // Two pauses: between the three pieces, none before the first.
    assert_eq!(start.elapsed(), Duration::from_millis(200));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_stream_stops_the_producer() {
    let delay = Duration::from_secs(3600);
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [
        {"text": "one two three four", "chunk_delay_ms": delay.as_millis() as u64}
    ]}]}));
    let metrics = tokio::runtime::Handle::current().metrics();
    let start = tokio::time::Instant::now();
    let mut stream = p.stream(request(&SessionId::new(), "hi", 0));
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        StreamEvent::TextDelta("one ".into())
    );
    assert_eq!(
        metrics.num_alive_tasks(),
        1,
        "the producer is waiting out its delay"
    );

    drop(stream);
    // Yielding keeps the runtime busy, so paused time does not jump past the delay: only the
    // producer noticing the closed stream can end it.
    for _ in 0..100 {
        if metrics.num_alive_tasks() == 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(
        metrics.num_alive_tasks(),
        0,
        "the producer should have stopped"
    );
    assert!(start.elapsed() < delay);
}

#[test]
fn malformed_script_files_name_the_file_and_the_problem() {
    let dir = std::env::temp_dir().join(format!("workmate-script-{}", SessionId::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.json");
    std::fs::write(
        &path,
        r#"{"conversations": [{"when": "*", "turns": [{"text": "hi", "delay": 5}]}]}"#,
    )
    .unwrap();
    let err = ScriptedProvider::from_file(&path).unwrap_err();
    assert!(matches!(err, ScriptError::Invalid { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("broken.json"), "{message}");
    assert!(message.contains("unknown field `delay`"), "{message}");
    assert!(message.contains("line 1"), "{message}");

    std::fs::write(
        &path,
        r#"{"conversations": [{"when": "*", "turns": [{"text": "hi"}]}]}"#,
    )
    .unwrap();
    assert!(ScriptedProvider::from_file(&path).is_ok());

    let missing = dir.join("missing.json");
    let err = ScriptedProvider::from_file(&missing).unwrap_err();
    assert!(matches!(err, ScriptError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("missing.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_call_outside_a_runtime_fails_instead_of_panicking() {
    let p = provider(&json!({"conversations": [{"when": "*", "turns": [{"text": "hi"}]}]}));
    let stream = p.stream(request(&SessionId::new(), "hi", 0));
    let played = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(drain(stream));
    assert!(
        played.error_message().contains("tokio runtime"),
        "{:?}",
        played.error
    );
}

/// A session where each request plays its conversation anew: `requests` earlier requests (each
/// answered by a tool call, its result and a final answer), then the newest, `text`, answered
/// `replies` times so far.
fn asking_again(session: &SessionId, requests: usize, text: &str, replies: usize) -> ModelRequest {
    let user = |content: &str| Message::User {
        content: content.into(),
        ts: 1,
        author: None,
        display: None,
    };
    let assistant = |content: &str| Message::Assistant {
        content: content.into(),
        ts: 2,
        tool_calls: Vec::new(),
        reasoning: None,
        usage: None,
        provider_state: Box::default(),
    };
    let mut messages = Vec::new();
    for n in 0..requests {
        messages.push(user("write the report"));
        messages.push(assistant("writing"));
        messages.push(Message::Tool {
            tool_call_id: format!("call_{}_0", 2 * n).into(),
            content: "saved".into(),
            ts: 3,
            display: None,
        });
        messages.push(assistant("done"));
    }
    messages.push(user(text));
    for _ in 0..replies {
        messages.push(assistant("writing"));
    }
    let mut request = request(session, text, 0);
    request.messages = messages;
    request
}

#[tokio::test]
async fn with_each_request_a_session_can_ask_again_and_again() {
    let p = provider(&json!({"each_request": true, "conversations": [
        {"when": "report", "turns": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "r.md"}}]},
            {"text": "Saved."}]},
        {"when": "*", "turns": [{"text": "Ask me for the report."}]}
    ]}));
    let session = SessionId::new();
    let mut ids = Vec::new();
    for asked in 0..3 {
        let first = drain(p.stream(asking_again(&session, asked, "write the report", 0))).await;
        let call = &first.reply().tool_calls[0];
        assert_eq!(call.name, "write_file", "request {asked}");
        ids.push(call.id.clone());
        let second = drain(p.stream(asking_again(&session, asked, "write the report", 1))).await;
        assert_eq!(second.reply().text, "Saved.", "request {asked}");
    }
    ids.dedup();
    assert_eq!(ids.len(), 3, "tool call ids stay unique: {ids:?}");
    let other = drain(p.stream(asking_again(&session, 3, "hello", 0))).await;
    assert_eq!(other.reply().text, "Ask me for the report.");
}
