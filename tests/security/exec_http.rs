//! The headline exploit over HTTP: the owner approves `cat` of the admin token (relative and
//! absolute), of the database file and of `/proc/self/environ`, and a connection to the host's
//! loopback. The sandboxed commands see none of it.

use std::net::TcpListener;

use serde_json::{Value, json};

use crate::crash::PROCESS_PATIENCE;
use crate::support::{Server, http_request};
use workmate_test_support::eventually_blocking;

/// A value only the server's environment holds.
const PROBE: &str = "workmate-security-probe-5f2c9a";

fn call(
    server: &Server,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let body = body.map(|b| b.to_string());
    let (status, text) =
        http_request(server.addr, method, path, Some(token), body.as_deref()).unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[test]
fn approved_commands_read_no_secret_and_reach_no_host_service() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let data = dir.path().join("data");
    let commands = [
        "cat ../../../data/admin_token".to_owned(),
        format!("cat {}", data.join("admin_token").display()),
        format!("cat {}", data.join("workmate.db").display()),
        "cat /proc/self/environ".to_owned(),
        "cat /proc/1/environ".to_owned(),
        format!("bash -c 'echo hello > /dev/tcp/127.0.0.1/{port} && echo CONNECTED'"),
    ];
    let calls: Vec<Value> = commands
        .iter()
        .map(|c| json!({"name": "run_shell", "arguments": {"command": c}}))
        .collect();
    let script = json!({"conversations": [{"when": "*", "turns": [
        {"tool_calls": calls}, {"text": "done"}]}]});
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let script_path = script_path.display().to_string();
    let env = [
        (
            "WORKMATE__PROVIDERS__SCRIPTED__SCRIPT",
            script_path.as_str(),
        ),
        ("WORKMATE__ENGINE__DEFAULT_MODEL", "scripted:test"),
        ("WORKMATE_SECURITY_PROBE", PROBE),
    ];
    let server = Server::start_with(dir.path(), &[], &env);
    let token = std::fs::read_to_string(data.join("admin_token")).unwrap();
    let token = token.trim();

    let (status, created) = call(&server, token, "POST", "/v1/sessions", None);
    assert_eq!(status, 201, "{created}");
    let session = created["session_id"].as_str().unwrap().to_owned();
    let message = json!({"type": "user_message", "text": "show me the secrets"});
    let path = format!("/v1/sessions/{session}/commands");
    assert_eq!(call(&server, token, "POST", &path, Some(message)).0, 202);

    // The owner approves every call it asks for, until the answer comes.
    let once = json!({"resolution": {"type": "approval", "choice": "once"}});
    let history = eventually_blocking("every call approved and answered", PROCESS_PATIENCE, || {
        let (_, inbox) = call(&server, token, "GET", "/v1/inbox?state=pending", None);
        for item in inbox["items"].as_array().into_iter().flatten() {
            let id = item["id"].as_str().unwrap();
            call(
                &server,
                token,
                "POST",
                &format!("/v1/inbox/{id}/resolve"),
                Some(once.clone()),
            );
        }
        let (_, body) = call(
            &server,
            token,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        );
        let messages = body["messages"].as_array()?.clone();
        let last = messages.last()?;
        (last["role"] == "assistant" && last["content"] == "done").then_some(messages)
    });
    let results: Vec<String> = history
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(Value::to_string)
        .collect();
    assert_eq!(results.len(), commands.len(), "{history:#?}");
    for result in &results {
        assert!(!result.contains(token), "the admin token leaked: {result}");
        assert!(
            !result.contains("SQLite format 3"),
            "the database leaked: {result}"
        );
        assert!(
            !result.contains(PROBE),
            "the server's environment leaked: {result}"
        );
        assert!(
            !result.contains("CONNECTED"),
            "the sandbox reached the host: {result}"
        );
    }
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "nothing connected to the host's loopback"
    );
    drop(server);
}
