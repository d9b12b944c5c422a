//! Traces over OTLP/HTTP: the real `workmate serve`, a fake model gateway, and a collector
//! stand-in. One turn started over HTTP (a tool call, then the answer) arrives as one trace: the
//! request, the turn, each model call and the tool's run.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::router::TOKEN;
use crate::support::{Server, http_request};

fn streamed(chunks: &[Value]) -> String {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

/// Every span the collector received: (name, trace id, span id, parent span id).
fn spans(bodies: &[Value]) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for body in bodies {
        for resource in body["resourceSpans"].as_array().into_iter().flatten() {
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let text = |k: &str| span[k].as_str().unwrap_or_default().to_owned();
                    out.push((
                        text("name"),
                        text("traceId"),
                        text("spanId"),
                        text("parentSpanId"),
                    ));
                }
            }
        }
    }
    out
}

/// A collector stand-in that takes every export.
async fn collector() -> MockServer {
    let collector = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&collector)
        .await;
    collector
}

/// Every span `collector` received.
async fn collected(collector: &MockServer) -> Vec<(String, String, String, String)> {
    let bodies: Vec<Value> = collector
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    spans(&bodies)
}

/// The trace of the span named `root`, checked to hold a span of each of `names`.
fn one_trace<'s>(
    spans: &'s [(String, String, String, String)],
    root: &str,
    names: &[&str],
) -> &'s (String, String, String, String) {
    let found = spans
        .iter()
        .find(|s| s.0 == root)
        .unwrap_or_else(|| panic!("no {root} span: {spans:?}"));
    let in_trace: BTreeSet<&str> = spans
        .iter()
        .filter(|s| s.1 == found.1)
        .map(|s| s.0.as_str())
        .collect();
    for name in names {
        assert!(
            in_trace.contains(name),
            "{name} not in the {root}'s trace: {spans:?}"
        );
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_turn_is_one_trace_from_the_request_to_the_tools() {
    let gateway = MockServer::start().await;
    let replies = [
        streamed(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0,
                   "id": "call_1", "type": "function", "function": {"name": "list_files",
                   "arguments": "{\"path\": \".\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
        streamed(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Done."}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
    ];
    for (priority, body) in (1u8..).zip(replies) {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
            .up_to_n_times(1)
            .with_priority(priority)
            .mount(&gateway)
            .await;
    }
    let collector = collector().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        format!(
            "[server]\nadmin_token = \"{TOKEN}\"\n\n[tracing]\notlp_endpoint = \"{}\"\n\n\
             [engine]\ndefault_model = \"gw:m\"\n\n\
             [providers.gw]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"k\"\n",
            collector.uri(),
            gateway.uri()
        ),
    )
    .unwrap();
    let dir_path = dir.path().to_owned();
    let gateway_uri = gateway.uri();
    tokio::task::spawn_blocking(move || {
        let server = Server::start(&dir_path, &[]);
        let call = |verb: &str, path: &str, body: Option<Value>| {
            let body = body.map(|b| b.to_string());
            http_request(server.addr, verb, path, Some(TOKEN), body.as_deref()).unwrap()
        };
        let (status, created) = call("POST", "/v1/sessions", Some(json!({})));
        assert_eq!(status, 201, "{created}");
        let created: Value = serde_json::from_str(&created).unwrap();
        let session = created["session_id"].as_str().unwrap().to_owned();
        let message = json!({"type": "user_message", "text": "what is here?"});
        let (status, _) = call(
            "POST",
            &format!("/v1/sessions/{session}/commands"),
            Some(message),
        );
        assert_eq!(status, 202);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (_, body) = call("GET", &format!("/v1/sessions/{session}/messages"), None);
            if body.contains("Done.") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the turn did not finish ({gateway_uri}): {body}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Stopping flushes the spans not yet exported.
        server.terminate(Duration::from_secs(10));
    })
    .await
    .unwrap();

    let spans = collected(&collector).await;
    let turn = one_trace(
        &spans,
        "turn",
        &["http.request", "turn", "model.call", "tool.execute"],
    );
    let trace = &turn.1;
    let model_calls = spans
        .iter()
        .filter(|s| s.0 == "model.call" && &s.1 == trace)
        .count();
    assert_eq!(model_calls, 2, "{spans:?}");
    // The turn hangs under the request that started it.
    let request = spans
        .iter()
        .find(|s| s.0 == "http.request" && s.2 == turn.3)
        .unwrap_or_else(|| panic!("the turn's parent is not a request span: {spans:?}"));
    assert_eq!(&request.1, trace);
}

#[test]
fn a_chat_turn_is_one_trace_from_the_intake_to_the_card_update() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = runtime.block_on(crate::intake_crash::fake_slack());
    let collector = runtime.block_on(collector());
    let dir = tempfile::tempdir().unwrap();
    let script = json!({"conversations": [{"when": "*", "turns": [{"text": "Done."}]}]});
    let mut env = crate::intake_crash::slack_env(dir.path(), &script, None, &fake);
    env.push(("WORKMATE__TRACING__OTLP_ENDPOINT".into(), collector.uri()));
    let server = crate::crash::start(dir.path(), &env);
    assert_eq!(crate::intake_crash::post(&server, 7), 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let updated = runtime
            .block_on(fake.received_requests())
            .unwrap_or_default()
            .iter()
            .any(|r| {
                r.url.path().starts_with("/chat.")
                    && String::from_utf8_lossy(&r.body).contains("Done.")
            });
        if updated {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the card never showed the answer"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server.terminate(Duration::from_secs(10));

    let spans = runtime.block_on(collected(&collector));
    one_trace(
        &spans,
        "chat.delivery",
        &[
            "http.request",
            "chat.delivery",
            "chat.job",
            "turn",
            "model.call",
            "card.update",
        ],
    );
}
