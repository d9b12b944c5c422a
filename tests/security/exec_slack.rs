//! The same exploit through Slack: a thread asks for `cat` of the database file and of
//! `/proc/self/environ`, the owner clicks Approve on each card, and the commands, sandboxed,
//! see neither.

use serde_json::Value;

use crate::slack::{SECRET, button_values, click, mention, signed, slack_app_with, wait_for};

const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [
        {"name": "run_shell", "arguments": {"command": "cat ../../../test.db"}},
        {"name": "run_shell", "arguments": {"command": "cat /proc/self/environ"}}]},
    {"text": "Done."}]}]}"#;

#[tokio::test]
async fn approved_commands_in_a_thread_read_no_secret() {
    let app = slack_app_with(SCRIPT).await;
    signed(&app, "events", &mention("EvSecrets"), SECRET).await;
    // The calls are asked one after the other: approve each card as it comes.
    let asks = |b: &Value| button_values(b).iter().any(|v| v.contains("once"));
    for seen in 1..=2 {
        let posts = wait_for(
            &app.fake,
            "chat.postMessage",
            "the next approval card",
            |p| p.iter().filter(|b| asks(b)).count() >= seen,
        )
        .await;
        let approval = posts.iter().filter(|b| asks(b)).nth(seen - 1).unwrap();
        let once = button_values(approval)
            .into_iter()
            .find(|v| v.contains("once"))
            .unwrap();
        signed(&app, "interactions", &click("U1", &once), SECRET).await;
    }
    wait_for(&app.fake, "chat.update", "the answer", |u| {
        u.iter().any(|b| b.to_string().contains("Done."))
    })
    .await;
    let tenant = crate::slack::tenant_of("T1");
    let sessions = app.store.sessions().list(&tenant, 10).await.unwrap();
    let history = app
        .store
        .messages()
        .list(&tenant, &sessions[0].id)
        .await
        .unwrap();
    let results: Vec<String> = history
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
        .filter(|m| m["role"] == "tool")
        .map(|m| m.to_string())
        .collect();
    assert_eq!(results.len(), 2, "{history:#?}");
    for result in &results {
        assert!(
            !result.contains("SQLite format 3"),
            "the database leaked: {result}"
        );
        // The test process's own environment, which the service's would be.
        assert!(
            !result.contains("CARGO_PKG_NAME"),
            "the environment leaked: {result}"
        );
    }
    app.chat.shutdown(std::time::Duration::from_secs(2)).await;
}
