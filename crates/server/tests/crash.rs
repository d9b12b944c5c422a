//! Crash tests: a `workmate serve` killed with SIGKILL mid-turn, then started again on the same
//! data, on each backend. The tool is a shell script that appends a line to a file each time it
//! runs, so "no tool ran twice" is a line count.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::backends::{Backend, on_every_backend};
use crate::support::{Server, http_request};
use workmate_test_support::eventually_blocking;

pub(crate) const TOKEN: &str = "crash-test-token-0123456789";

/// A scripted model that runs `sh count.sh <seconds>` once, then answers.
pub(crate) fn prepare(dir: &Path, seconds: u32) -> Vec<(String, String)> {
    prepare_rounds(dir, seconds, 1)
}

/// Like [`prepare`], for `rounds` user messages that each count once.
pub(crate) fn prepare_rounds(dir: &Path, seconds: u32, rounds: usize) -> Vec<(String, String)> {
    let round = [
        json!({"text": "Counting.", "tool_calls": [{"name": "run_shell", "arguments": {"command": format!("sh count.sh {seconds}")}}]}),
        json!({"text": "done"}),
    ];
    let turns: Vec<Value> = (0..rounds).flat_map(|_| round.clone()).collect();
    scripted(
        dir,
        &json!({"conversations": [{"when": "*", "turns": turns}]}),
    )
}

/// The environment of a server that answers with the scripted model playing `script`, and takes
/// the admin [`TOKEN`].
pub(crate) fn scripted(dir: &Path, script: &Value) -> Vec<(String, String)> {
    let path = dir.join("script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    vec![
        (
            "WORKMATE__PROVIDERS__SCRIPTED__SCRIPT".into(),
            path.display().to_string(),
        ),
        (
            "WORKMATE__ENGINE__DEFAULT_MODEL".into(),
            "scripted:test".into(),
        ),
        ("WORKMATE__SERVER__ADMIN_TOKEN".into(), TOKEN.into()),
    ]
}

/// `env` with the server's database set to `database` (`None`: the SQLite file of its data
/// directory).
pub(crate) fn with_database(
    mut env: Vec<(String, String)>,
    database: Option<&str>,
) -> Vec<(String, String)> {
    if let Some(url) = database {
        env.push(("WORKMATE__DATABASE__URL".into(), url.to_owned()));
    }
    env
}

pub(crate) fn start(dir: &Path, env: &[(String, String)]) -> Server {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_with(dir, &[], &env)
}

pub(crate) fn call(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let body = body.map(|b| b.to_string());
    let (status, text) =
        http_request(server.addr, method, path, Some(TOKEN), body.as_deref()).unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// How long a process test waits for something the server does.
pub(crate) const PROCESS_PATIENCE: Duration = Duration::from_secs(30);

/// Creates a session whose workspace holds `count.sh`, and asks it to count.
pub(crate) fn start_counting(server: &Server, dir: &Path) -> (String, PathBuf) {
    let (status, created) = call(server, "POST", "/v1/sessions", None);
    assert_eq!(status, 201, "{created}");
    let session = created["session_id"].as_str().unwrap().to_owned();
    let workspace = dir.join("workspaces/default").join(&session);
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(
        workspace.join("count.sh"),
        "echo run >> count.txt\nsleep \"$1\"\n",
    )
    .unwrap();
    let message = json!({"type": "user_message", "text": "count"});
    let (status, _) = call(
        server,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    );
    assert_eq!(status, 202);
    (session, workspace.join("count.txt"))
}

pub(crate) fn pending(server: &Server) -> Vec<Value> {
    call(server, "GET", "/v1/inbox?state=pending", None).1["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

pub(crate) fn approve(server: &Server, item: &str) {
    let body = json!({"resolution": {"type": "approval", "choice": "once"}});
    let (status, answer) = call(
        server,
        "POST",
        &format!("/v1/inbox/{item}/resolve"),
        Some(body),
    );
    assert_eq!(status, 200, "{answer}");
}

pub(crate) fn runs(count_file: &Path) -> usize {
    std::fs::read_to_string(count_file)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Waits for the final answer; returns the history.
pub(crate) fn finished_history(server: &Server, session: &str) -> Vec<Value> {
    eventually_blocking("the final answer", PROCESS_PATIENCE, || {
        let (_, body) = call(
            server,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        );
        let messages = body["messages"].as_array()?.clone();
        let last = messages.last()?;
        (last["role"] == "assistant" && last["content"] == "done").then_some(messages)
    })
}

/// Every tool call in the history has exactly one tool message.
pub(crate) fn assert_answered_once(history: &[Value]) {
    for message in history.iter().filter(|m| m["role"] == "assistant") {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let answers = history
                .iter()
                .filter(|m| m["role"] == "tool" && m["tool_call_id"] == call["id"])
                .count();
            assert_eq!(answers, 1, "call {} answered {answers} times", call["id"]);
        }
    }
}

on_every_backend!(
    a_turn_parked_on_an_approval_completes_after_a_sigkill,
    a_tool_killed_mid_run_is_not_run_again,
);

fn a_turn_parked_on_an_approval_completes_after_a_sigkill(backend: Backend) {
    let database = backend.database();
    let dir = tempfile::tempdir().unwrap();
    let env = with_database(prepare(dir.path(), 0), database.as_deref());
    let server = start(dir.path(), &env);
    let (session, count_file) = start_counting(&server, dir.path());
    let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
        pending(&server).first().cloned()
    });
    server.crash();

    let server = start(dir.path(), &env);
    let still = pending(&server);
    assert_eq!(still.len(), 1, "no second prompt after the restart");
    assert_eq!(
        still[0]["id"], item["id"],
        "the parked item is the same one"
    );
    approve(&server, item["id"].as_str().unwrap());
    let history = finished_history(&server, &session);
    assert_eq!(runs(&count_file), 1, "the tool ran exactly once");
    assert_answered_once(&history);
    assert_eq!(server.terminate(Duration::from_secs(5)).code(), Some(0));
}

fn a_tool_killed_mid_run_is_not_run_again(backend: Backend) {
    let database = backend.database();
    let dir = tempfile::tempdir().unwrap();
    let env = with_database(prepare(dir.path(), 20), database.as_deref());
    let server = start(dir.path(), &env);
    let (session, count_file) = start_counting(&server, dir.path());
    let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
        pending(&server).first().cloned()
    });
    approve(&server, item["id"].as_str().unwrap());
    eventually_blocking("the tool to start", PROCESS_PATIENCE, || {
        (runs(&count_file) == 1).then_some(())
    });
    server.crash();

    let server = start(dir.path(), &env);
    let history = finished_history(&server, &session);
    assert_eq!(runs(&count_file), 1, "never re-run after the restart");
    assert_answered_once(&history);
    let tool = history.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("outcome unknown"),
        "{tool}"
    );
    assert!(pending(&server).is_empty());
    assert_eq!(server.terminate(Duration::from_secs(5)).code(), Some(0));
}
