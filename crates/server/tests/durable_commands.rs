//! The HTTP command path is durable: `POST /v1/sessions/{id}/commands` answers only once the
//! command is stored, so a SIGKILL anywhere between its arrival and its turn storing the message
//! loses nothing that was answered, and an `Idempotency-Key` makes a retried request run once.
//! Each window is hit every time by a kill point (see `workmate-faults`).

use serde_json::{Value, json};

use crate::backends::{Backend, on_every_backend};
use crate::crash::{PROCESS_PATIENCE, TOKEN, call, scripted, start, with_database};
use crate::support::{Server, http_send};
use workmate_test_support::eventually_blocking;

/// A model that answers every message with "done".
fn env(dir: &std::path::Path, database: Option<&str>) -> Vec<(String, String)> {
    let script = json!({"each_request": true,
        "conversations": [{"when": "*", "turns": [{"text": "done"}]}]});
    with_database(scripted(dir, &script), database)
}

/// Posts a message to `session` with `key` as its `Idempotency-Key`: the status, or `None` when
/// the connection broke (the process died before it answered).
fn send(server: &Server, session: &str, text: &str, key: &str) -> Option<(u16, Value)> {
    let body = json!({"type": "user_message", "text": text}).to_string();
    let bearer = format!("Bearer {TOKEN}");
    let headers = [("Authorization", bearer.as_str()), ("Idempotency-Key", key)];
    let path = format!("/v1/sessions/{session}/commands");
    let (status, body) = http_send(server.addr, "POST", &path, &headers, Some(&body)).ok()?;
    (status != 0).then(|| (status, serde_json::from_str(&body).unwrap_or(Value::Null)))
}

/// The texts of the session's user messages, once its last turn has answered.
fn user_texts(server: &Server, session: &str) -> Vec<String> {
    eventually_blocking("the answer", PROCESS_PATIENCE, || {
        let (_, body) = call(
            server,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        );
        let messages = body["messages"].as_array()?.clone();
        let last = messages.last()?;
        (last["role"] == "assistant" && last["content"] == "done").then(|| {
            messages
                .iter()
                .filter(|m| m["role"] == "user")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
    })
}

fn new_session(server: &Server) -> String {
    let (status, created) = call(server, "POST", "/v1/sessions", None);
    assert_eq!(status, 201, "{created}");
    created["session_id"].as_str().unwrap().to_owned()
}

/// A session made in `dir`, and a server started again there that dies at the kill point
/// `point`.
fn armed_at(dir: &std::path::Path, env: &[(String, String)], point: &str) -> (String, Server) {
    let server = start(dir, env);
    let session = new_session(&server);
    server.terminate(std::time::Duration::from_secs(10));
    let mut armed = env.to_vec();
    armed.push((workmate_faults::ENV.into(), point.into()));
    (session, start(dir, &armed))
}

on_every_backend!(
    a_command_killed_before_its_answer_runs_once_after_the_restart,
    a_command_answered_before_its_message_was_stored_is_not_lost,
);

/// Killed after the command is stored (before it is applied, and after it is applied but before
/// the answer): the restart runs it, and the client's retry with the same key runs nothing more.
fn a_command_killed_before_its_answer_runs_once_after_the_restart(backend: Backend) {
    let database = backend.database();
    for point in ["api_command.stored", "api_command.applied"] {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path(), database.as_deref());
        let (session, server) = armed_at(dir.path(), &env, point);
        let key = format!("retry-{point}");
        let answered = send(&server, &session, "hello", &key);
        assert_eq!(answered, None, "{point}: killed before the answer");
        assert!(!server.died().success(), "{point}");

        let server = start(dir.path(), &env);
        assert_eq!(user_texts(&server, &session), ["hello"], "{point}");
        let (status, body) = send(&server, &session, "hello", &key).unwrap();
        assert_eq!(status, 202, "{point}: {body}");
        assert_eq!(body["accepted"], "duplicate", "{point}");
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(
            user_texts(&server, &session),
            ["hello"],
            "{point}: ran once"
        );
        server.terminate(std::time::Duration::from_secs(10));
    }
}

/// Killed after the `202`, before the turn stored the message: the restart stores and answers
/// it, once.
fn a_command_answered_before_its_message_was_stored_is_not_lost(backend: Backend) {
    let database = backend.database();
    let dir = tempfile::tempdir().unwrap();
    let env = env(dir.path(), database.as_deref());
    let (session, server) = armed_at(dir.path(), &env, "turn.message_unstored");
    // Whether the 202 left before the process died is a race; either way nothing is lost.
    let answered = send(&server, &session, "hello", "kill-after-202");
    assert!(!server.died().success());

    let server = start(dir.path(), &env);
    assert_eq!(
        user_texts(&server, &session),
        ["hello"],
        "answered: {answered:?}"
    );
    let (status, _) = send(&server, &session, "hello", "kill-after-202").unwrap();
    assert_eq!(status, 202);
    let (status, body) = send(&server, &session, "again", "another-key").unwrap();
    assert_eq!(
        (status, &body["accepted"]),
        (202, &json!("turn_started")),
        "{body}"
    );
    eventually_blocking("the second answer", PROCESS_PATIENCE, || {
        let (_, body) = call(
            &server,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        );
        let users = body["messages"]
            .as_array()?
            .iter()
            .filter(|m| m["role"] == "user")
            .count();
        (users == 2).then_some(())
    });
    server.terminate(std::time::Duration::from_secs(10));
}

#[test]
fn an_idempotency_key_names_one_request_of_its_caller() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(dir.path(), None);
    let server = start(dir.path(), &env);
    let first = new_session(&server);
    let second = new_session(&server);
    let (status, _) = send(&server, &first, "one", "same").unwrap();
    assert_eq!(status, 202);
    assert_eq!(user_texts(&server, &first), ["one"]);
    // The same caller and key on another session is the same request: not applied.
    let (status, body) = send(&server, &second, "two", "same").unwrap();
    assert_eq!((status, &body["accepted"]), (202, &json!("duplicate")));
    let (status, body) = send(&server, &second, "two", "").unwrap_or_default();
    assert_eq!(status, 400, "an empty key is refused: {body}");
    server.terminate(std::time::Duration::from_secs(10));
}
