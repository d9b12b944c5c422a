//! Compaction over HTTP: the tenant setting checked as it is set, `{"type": "compact"}` run as a
//! turn, the view shown with the session, and a context overflow compacted and asked again.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::api::{authed, messages_once};
use crate::authority::people_with_script;
use crate::support::{PATIENCE, eventually};

/// The summarizer's conversation first (only its request says "Summarize this part"), then the
/// thread: two answers, an overflow, and the answer asked again after compacting.
const SCRIPT: &str = r#"{"conversations": [
    {"when": "Summarize this part of the conversation", "turns": [
        {"text": "Goal: plan the offsite. Decided: Lisbon, 12 people."}, {"text": "Open items: budget."}]},
    {"when": "*", "turns": [
        {"text": "Lisbon works for 12 people."},
        {"text": "The budget is about 9,000 EUR."},
        {"fail_with": "This model's maximum context length is 8192 tokens"},
        {"text": "Booked the venue in Lisbon."}]}]}"#;

async fn turn_done(app: &crate::router::App, session: &str, answers: usize) -> Vec<Value> {
    messages_once(app, session, |messages| {
        messages.iter().filter(|m| m["role"] == "assistant").count() >= answers
    })
    .await
}

#[tokio::test]
async fn compaction_over_http_by_command_and_after_an_overflow() {
    let app = people_with_script(SCRIPT).await;
    let bad = json!({"compaction": {"threshold_pct": 80}});
    let (status, body) = authed(&app, "PATCH", "/v1/tenant/settings", Some(bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("at most 1"), "{body}");
    let good = json!({"compaction": {"threshold_pct": 0.7}});
    let (status, body) = authed(&app, "PATCH", "/v1/tenant/settings", Some(good)).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (_, created) = authed(&app, "POST", "/v1/sessions", None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let commands = format!("/v1/sessions/{session}/commands");
    let compact = json!({"type": "compact"});
    let (status, body) = authed(&app, "POST", &commands, Some(compact.clone())).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "nothing to compact yet: {body}"
    );
    assert!(
        body.to_string().contains("nothing to compact yet"),
        "{body}"
    );

    for (n, text) in ["Where should the offsite be?", "And the budget?"]
        .iter()
        .enumerate()
    {
        let message = json!({"type": "user_message", "text": text});
        let (status, _) = authed(&app, "POST", &commands, Some(message)).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        turn_done(&app, &session, n + 1).await;
    }
    let (status, body) = authed(&app, "POST", &commands, Some(compact)).await;
    assert_eq!(
        (status, body["accepted"].as_str()),
        (StatusCode::ACCEPTED, Some("turn_started")),
        "{body}"
    );
    let view = eventually("the session's compaction view", PATIENCE, || async {
        let (_, body) = authed(&app, "GET", &format!("/v1/sessions/{session}"), None).await;
        let view = body["session"]["compaction"].clone();
        view.is_object().then_some(view)
    })
    .await;
    assert_eq!(view["boundary"], 2, "the newest turn is kept whole: {view}");
    assert_eq!(view["trimmed"], false);
    assert!(
        view["summary"]
            .as_str()
            .unwrap()
            .contains("Decided: Lisbon"),
        "{view}"
    );

    // The model then says the conversation overflowed: it is compacted again and asked again.
    let message = json!({"type": "user_message", "text": "Book it."});
    authed(&app, "POST", &commands, Some(message)).await;
    let messages = turn_done(&app, &session, 3).await;
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        last["content"], "Booked the venue in Lisbon.",
        "{messages:#?}"
    );
    let notices: Vec<_> = messages
        .iter()
        .filter(|m| m["role"] == "notice" && m["kind"] == "compacted")
        .collect();
    assert_eq!(notices.len(), 2, "{messages:#?}");
    let said = messages.iter().filter(|m| m["role"] == "user").count();
    assert_eq!(said, 3, "the history keeps every message");
}
