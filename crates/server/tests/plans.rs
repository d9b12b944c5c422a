//! Plan mode over HTTP: a plan parked in the inbox, approved into auto mode (the write after it
//! runs unasked), and, in another session, rejected with feedback the model gets back.

use axum::http::StatusCode;
use serde_json::json;

use crate::api::{authed, messages_once};
use crate::authority::people_with_script;
use crate::support::{PATIENCE, eventually};

const PLANNER: &str = r###"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "propose_plan", "arguments": {"plan": "## Notes\n1. Write notes.md"}}]},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "hello"}}]},
    {"text": "Done."}]}]}"###;

/// A session in plan mode that was asked for the notes; the id of its parked plan.
async fn planning(app: &crate::router::App) -> (String, String) {
    let (_, created) = authed(app, "POST", "/v1/sessions", None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let commands = format!("/v1/sessions/{session}/commands");
    let (status, body) = authed(
        app,
        "POST",
        &commands,
        Some(json!({"type": "set_mode", "mode": "plan"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    authed(
        app,
        "POST",
        &commands,
        Some(json!({"type": "user_message", "text": "write the notes"})),
    )
    .await;
    let item = eventually("the plan's approval in the inbox", PATIENCE, || async {
        let (_, listed) = authed(
            app,
            "GET",
            &format!("/v1/inbox?state=pending&session={session}"),
            None,
        )
        .await;
        listed["items"]
            .as_array()?
            .iter()
            .find(|i| i["kind"] == "plan")
            .cloned()
    })
    .await;
    (session, item["id"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_plan_approved_into_auto_mode_then_its_write_runs_unasked() {
    let app = people_with_script(PLANNER).await;
    let (session, item) = planning(&app).await;
    let approve = json!({"resolution": {"type": "plan", "approved": true, "mode": "auto"}});
    let (status, body) = authed(
        &app,
        "POST",
        &format!("/v1/inbox/{item}/resolve"),
        Some(approve),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    messages_once(&app, &session, |m| {
        m.iter().any(|m| m["content"] == "Done.")
    })
    .await;
    let (_, body) = authed(&app, "GET", &format!("/v1/sessions/{session}"), None).await;
    assert_eq!(body["session"]["mode"], "auto");
    let (_, listed) = authed(&app, "GET", &format!("/v1/inbox?session={session}"), None).await;
    let kinds: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["plan"], "the write asked nobody");
}

#[tokio::test]
async fn a_rejected_plan_hands_its_feedback_to_the_model() {
    let app = people_with_script(PLANNER).await;
    let (session, item) = planning(&app).await;
    let reject = json!({"resolution": {"type": "plan", "approved": false, "feedback": "Put them in docs/ instead"}});
    let (status, body) = authed(
        &app,
        "POST",
        &format!("/v1/inbox/{item}/resolve"),
        Some(reject),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let all = messages_once(&app, &session, |m| m.iter().any(|m| m["role"] == "tool")).await;
    let result = all.iter().find(|m| m["role"] == "tool").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        result.contains("\"approved\":false") && result.contains("Put them in docs/ instead"),
        "{result}"
    );
    let (_, body) = authed(&app, "GET", &format!("/v1/sessions/{session}"), None).await;
    assert_eq!(
        body["session"]["mode"], "plan",
        "a rejection changes no mode"
    );
}
