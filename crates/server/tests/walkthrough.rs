//! The README's offline-demo walk-through, run exactly as written (only its address moved to the
//! test server's port) against a fresh `workmate demo`: when the text drifts from what works, this
//! fails. Then the demo is asked for the report three times in one session, and answers three
//! times.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{PATIENCE, Server, eventually, http_request};

/// What marks the walk-through's block in the README.
const MARKER: &str = "<!-- walk-through: run as written by crates/server/tests/walkthrough.rs -->";

/// The shell block right after the marker.
fn walkthrough() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let after = readme
        .split_once(MARKER)
        .expect("the README marks its walk-through")
        .1;
    let body = after
        .trim_start()
        .strip_prefix("```sh\n")
        .expect("a sh block follows the marker");
    body[..body.find("\n```").expect("the block ends")].to_owned()
}

#[test]
fn the_readme_walkthrough_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(dir.path());
    let script = walkthrough().replace("127.0.0.1:8080", &server.addr.to_string());
    let out = Command::new("timeout")
        .args(["60", "bash", "-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{stderr}\n{}",
        out.status,
        server.log_text()
    );
    for expected in ["approving ", "# Weekly report", "event: turn_end"] {
        assert!(stdout.contains(expected), "{expected:?} missing:\n{stdout}");
    }
}

/// The admin token a fresh demo wrote.
fn admin_token(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("data/admin_token"))
        .unwrap()
        .trim()
        .to_owned()
}

#[tokio::test]
async fn the_demo_writes_the_report_as_often_as_it_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(dir.path());
    let token = admin_token(dir.path());
    let call = |method: &'static str, path: String, body: Option<Value>| {
        let token = token.clone();
        let addr = server.addr;
        async move {
            tokio::task::spawn_blocking(move || {
                let body = body.map(|b| b.to_string());
                let (status, text) =
                    http_request(addr, method, &path, Some(&token), body.as_deref()).unwrap();
                (
                    status,
                    serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
                )
            })
            .await
            .unwrap()
        }
    };
    let (_, created) = call("POST", "/v1/sessions".into(), None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    for asked in 1..=3 {
        let message = json!({"type": "user_message", "text": "write this week's report and save it as a file"});
        let (status, _) = call(
            "POST",
            format!("/v1/sessions/{session}/commands"),
            Some(message),
        )
        .await;
        assert_eq!(status, 202, "request {asked}");
        let item = eventually("the request's approval in the inbox", PATIENCE, || async {
            let (_, listed) = call(
                "GET",
                format!("/v1/inbox?state=pending&session={session}"),
                None,
            )
            .await;
            listed["items"][0]["id"].as_str().map(str::to_owned)
        })
        .await;
        let approve = json!({"resolution": {"type": "approval", "choice": "once"}});
        let (status, _) = call("POST", format!("/v1/inbox/{item}/resolve"), Some(approve)).await;
        assert_eq!(status, 200, "request {asked}");
        // The turn ends with the demo's answer, not a failure.
        let answers = eventually("the demo's answer", PATIENCE, || async {
            let (_, history) = call("GET", format!("/v1/sessions/{session}/messages"), None).await;
            let done: Vec<String> = history["messages"]
                .as_array()?
                .iter()
                .filter(|m| m["role"] == "assistant")
                .filter_map(|m| m["content"].as_str())
                .filter(|text| text.starts_with("Done: **weekly-report.md**"))
                .map(str::to_owned)
                .collect();
            (done.len() >= asked).then_some(done)
        })
        .await;
        assert_eq!(answers.len(), asked);
    }
    drop(server);
}
