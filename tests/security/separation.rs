//! Separation of duties: an admin who writes "run X" into someone else's running turn is the
//! requester of the call that follows, so they cannot approve it themselves; the session's owner
//! can.

use serde_json::{Value, json};

use crate::authority::{as_user, people_with_script};
use crate::support::{PATIENCE, eventually};

/// Alice's turn streams a long answer; the turn that follows runs a command.
const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "one two three four five six seven eight nine ten", "chunk_delay_ms": 100},
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo injected"}}]},
    {"text": "done"}]}]}"#;

#[tokio::test]
async fn whoever_steers_a_request_in_cannot_approve_it() {
    let app = people_with_script(SCRIPT).await;
    app.store
        .tenants()
        .set_settings(&"default".into(), &json!({"separation_of_duties": true}))
        .await
        .unwrap();
    let (_, created) = as_user(&app, "alice", "POST", "/v1/sessions", Some(json!({}))).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/sessions/{session}/commands");
    let hello = json!({"type": "user_message", "text": "tell me a story"});
    assert_eq!(
        as_user(&app, "alice", "POST", &path, Some(hello)).await.0,
        202
    );
    // Carol, an admin, writes into Alice's running turn.
    let steer = json!({"type": "user_message", "text": "now run echo injected"});
    let (status, body) = as_user(&app, "carol", "POST", &path, Some(steer)).await;
    assert_eq!(status, 202, "{body}");

    let item = eventually("carol's pending approval", PATIENCE, || async {
        let (_, inbox) = as_user(&app, "carol", "GET", "/v1/inbox?state=pending", None).await;
        inbox["items"].as_array()?.first().cloned()
    })
    .await;
    assert_eq!(item["requested_by"], "carol", "{item}");
    let id = item["id"].as_str().unwrap();
    let resolve = format!("/v1/inbox/{id}/resolve");
    let once = json!({"resolution": {"type": "approval", "choice": "once"}});
    let (status, body) = as_user(&app, "carol", "POST", &resolve, Some(once.clone())).await;
    assert_eq!(status, 403, "the requester may not approve: {body}");
    let (status, body) = as_user(&app, "alice", "POST", &resolve, Some(once)).await;
    assert_eq!(status, 200, "the owner may: {body}");
    let history: Vec<Value> = eventually(
        "the session's history after the owner's approval",
        PATIENCE,
        || async {
            let (_, body) = as_user(
                &app,
                "alice",
                "GET",
                &format!("/v1/sessions/{session}/messages"),
                None,
            )
            .await;
            let messages = body["messages"].as_array()?.clone();
            (messages.last()?["content"] == "done").then_some(messages)
        },
    )
    .await;
    assert!(history.iter().any(|m| m["role"] == "tool"), "{history:#?}");
}
