//! DLP canaries: a secret planted in a person's message, in a tool call's arguments and in a
//! tool's result never reaches the model's payload, the server's logs or the audit trail. The
//! real `workmate serve` runs a turn against a fake OpenAI-compatible gateway in a tenant that
//! redacts model input; the test then greps all three.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::router::TOKEN;
use crate::support::{Server, http_request, run};

/// Every canary shares this word; the redacted forms do not.
const MARK: &str = "canary";
const IN_MESSAGE: &str = "sk-canary-MESSAGE0123456789abcdef";
const IN_ARGUMENTS: &str = "sk-canary-ARGUMENTS0123456789abcd";

/// An OpenAI-style streamed reply calling `name` with `arguments`.
fn tool_call(id: &str, name: &str, arguments: &Value) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

fn answer(text: &str) -> String {
    format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    )
}

fn call(server: &Server, verb: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let body = body.map(|b| b.to_string());
    let (status, text) =
        http_request(server.addr, verb, path, Some(TOKEN), body.as_deref()).unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_secret_never_reaches_the_model_the_logs_or_the_audit_trail() {
    let gateway = MockServer::start().await;
    let replies = [
        // The model writes the secret it was given into a file, reads the file back, answers.
        tool_call(
            "call_w",
            "write_file",
            &json!({"path": "notes.txt", "content": format!("key: {IN_ARGUMENTS}")}),
        ),
        tool_call("call_r", "read_file", &json!({"path": "notes.txt"})),
        answer("Stored."),
    ];
    for (priority, body) in (1u8..).zip(replies) {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
            .up_to_n_times(1)
            .with_priority(priority)
            .mount(&gateway)
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        format!(
            "[server]\nadmin_token = \"{TOKEN}\"\n\n[log]\nlevel = \"debug\"\n\n\
             [engine]\ndefault_model = \"gw:m\"\n\n\
             [providers.gw]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"k\"\n",
            gateway.uri()
        ),
    )
    .unwrap();

    let path = dir.path().to_owned();
    let (log, audit) = tokio::task::spawn_blocking(move || {
        let server = Server::start(&path, &[]);
        let (status, body) = call(
            &server,
            "PATCH",
            "/v1/tenant/settings",
            Some(json!({"dlp": {"model": true}})),
        );
        assert_eq!(status, 200, "{body}");
        let (status, created) = call(
            &server,
            "POST",
            "/v1/sessions",
            Some(json!({"mode": "auto"})),
        );
        assert_eq!(status, 201, "{created}");
        let session = created["session_id"].as_str().unwrap().to_owned();
        let message = json!({"type": "user_message", "text": format!("keep my key {IN_MESSAGE}")});
        let commands = format!("/v1/sessions/{session}/commands");
        assert_eq!(call(&server, "POST", &commands, Some(message)).0, 202);
        // Until the turn has answered and its records are sealed.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (_, trail) = call(&server, "GET", "/v1/audit?stage=tool_finished", None);
            let finished = trail["records"].as_array().map_or(0, Vec::len);
            let sealed = trail["records"]
                .as_array()
                .is_some_and(|r| r.iter().all(|r| !r["seq"].is_null()));
            if finished == 2 && sealed {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the turn did not finish: {trail}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = server.log_text();
        server.terminate(Duration::from_secs(5));
        let export = run(&path, &["audit", "export", "--tenant", "default"], &[]);
        assert_eq!(export.status.code(), Some(0));
        (log, String::from_utf8(export.stdout).unwrap())
    })
    .await
    .unwrap();

    // The model's payloads: three calls, the canaries redacted in each.
    let requests = gateway.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3);
    for (i, request) in requests.iter().enumerate() {
        let body = String::from_utf8_lossy(&request.body);
        assert!(!body.contains(MARK), "request {i} carries a canary: {body}");
        assert!(body.contains("[redacted:api_key]"), "request {i}: {body}");
    }
    let last = String::from_utf8_lossy(&requests[2].body);
    assert!(
        last.contains("key: [redacted:api_key]"),
        "the tool result, redacted: {last}"
    );

    // The logs, at debug level.
    assert!(log.contains("Listening."), "{log}");
    assert!(!log.contains(MARK), "the log carries a canary: {log}");

    // The audit trail: the arguments and the result are there, redacted; the hidden count too.
    assert!(
        !audit.contains(MARK),
        "the audit trail carries a canary: {audit}"
    );
    let records: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let proposed = records
        .iter()
        .find(|r| r["stage"] == "tool_proposed" && r["tool"] == "write_file")
        .unwrap_or_else(|| panic!("no tool_proposed record: {audit}"));
    assert_eq!(
        proposed["detail"]["arguments"]["content"],
        "key: [redacted:api_key]"
    );
    assert_eq!(proposed["detail"]["model"], "gw:m");
    assert_eq!(proposed["detail"]["surface"], "http");
    for stage in ["tool_started", "tool_finished"] {
        assert!(
            records
                .iter()
                .any(|r| r["stage"] == stage && r["tool"] == "read_file"),
            "no {stage} record: {audit}"
        );
    }
    assert!(
        records
            .iter()
            .any(|r| r["stage"] == "filtered" && r["detail"]["hidden_fields"] == 1),
        "{audit}"
    );
}
