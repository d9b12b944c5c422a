//! `workmate models` and `workmate models check` against a fake gateway.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::run;

fn gateway_config(dir: &std::path::Path, base_url: &str) {
    let toml = format!(
        "[providers.gw]\nkind = \"openai\"\nbase_url = \"{base_url}/v1\"\napi_key = \"sk-test-secret\"\nmodels = [\"gpt-good\", \"gpt-broken\"]\n\
         [providers.claude]\nkind = \"anthropic\"\nbase_url = \"{base_url}/anthropic\"\n"
    );
    std::fs::write(dir.join("workmate.toml"), toml).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_and_checks_each_configured_model() {
    let server = MockServer::start().await;
    let ok = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "OK"}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    );
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(wiremock::matchers::body_partial_json(
            json!({"model": "gpt-good"}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_raw(ok, "text/event-stream"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(wiremock::matchers::body_partial_json(json!({"model": "gpt-broken"})))
        .respond_with(ResponseTemplate::new(404).set_body_string(r#"{"error":{"code":"model_not_found","message":"The model `gpt-broken` does not exist or you do not have access to it."}}"#))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    gateway_config(dir.path(), &server.uri());

    let dir_path = dir.path().to_owned();
    let listed = tokio::task::spawn_blocking(move || run(&dir_path, &["models"], &[]))
        .await
        .unwrap();
    let text = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.status.code(), Some(0), "{text}");
    assert!(
        text.contains("gw:gpt-good") && text.contains("gw:gpt-broken"),
        "{text}"
    );
    assert!(
        text.contains("claude     anthropic") && text.contains("no models listed"),
        "{text}"
    );
    assert!(!text.contains("sk-test-secret"));

    let dir_path = dir.path().to_owned();
    let checked = tokio::task::spawn_blocking(move || run(&dir_path, &["models", "check"], &[]))
        .await
        .unwrap();
    let report = String::from_utf8(checked.stdout).unwrap();
    assert_eq!(checked.status.code(), Some(1), "one model fails: {report}");
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("gw:gpt-good") && l.contains("ok (") && l.ends_with("OK")),
        "{report}"
    );
    assert!(
        report.lines().any(|l| l.starts_with("gw:gpt-broken")
            && l.contains("FAILED")
            && l.contains("doesn't have access")),
        "{report}"
    );
    assert!(
        report.contains("claude") && report.contains("skipped"),
        "{report}"
    );
    assert_eq!(
        String::from_utf8_lossy(&checked.stderr).trim(),
        "error: some models did not answer"
    );
}
