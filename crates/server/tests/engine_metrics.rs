//! The engine's series on `/metrics`: one turn with a tool call that waits for an approval shows
//! up as a completed turn, a finished tool call, an approval and its latency, and model calls
//! with their duration and tokens, with no tenant, session or user in any label.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;

use crate::authority::{as_user, asks, people};
use crate::router::send;

#[tokio::test]
async fn a_turn_with_an_approval_shows_on_metrics() {
    let app = people().await;
    assert!(app.state.hub.observe(app.state.metrics.engine()));
    let (session, item) = asks(&app, "alice").await;
    let answer = json!({"resolution": {"type": "approval", "choice": "once"}});
    let (status, body) = as_user(
        &app,
        "bob",
        "POST",
        &format!("/v1/inbox/{item}/resolve"),
        Some(answer),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let text = workmate_test_support::eventually_ok(
        "a completed turn in the metrics",
        Duration::from_secs(20),
        || async {
            let (_, _, text) = send(&app.router, "GET", "/metrics").await;
            if text.contains(r#"workmate_turns_total{outcome="completed"} 1"#) {
                Ok(text)
            } else {
                Err(text)
            }
        },
    )
    .await;
    for line in [
        r#"workmate_tool_calls_total{status="ok"} 1"#,
        r#"workmate_approvals_total{decision="approved"} 1"#,
        "workmate_approval_latency_seconds_count 1",
        r#"workmate_model_calls_total{model="scripted:demo",outcome="ok"} 2"#,
        r#"workmate_model_call_seconds_count{model="scripted:demo"} 2"#,
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(line)),
            "missing {line:?} in:\n{text}"
        );
    }
    for private in [session.as_str(), item.as_str(), "alice", "bob", "default"] {
        assert!(!text.contains(private), "{private} in a label:\n{text}");
    }
}
