//! Backups of an embedded deployment: `workmate backup` taken while 100 turns run, restored by
//! `workmate restore` into a new folder. The restored server starts, every session stored
//! before the backup reads back, and `workmate audit verify` passes. A restore that lacks the
//! vault key its secrets need, or that would overwrite a deployment, is refused and writes
//! nothing.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::crash::{call, scripted, start};
use crate::support::{Server, run_with_input};

const SESSIONS: usize = 100;
/// The vault's master key (32 bytes, base64).
const KEY: &str = "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=";
const ANSWER: &str = "one two three four five six seven eight nine ten eleven twelve";

/// The settings of a server in `dir`: the scripted model, the vault key.
fn settings(dir: &Path) -> Vec<(String, String)> {
    let mut env = scripted(
        dir,
        &json!({"each_request": true, "conversations": [{"when": "*", "turns": [
            {"text": ANSWER, "chunk_delay_ms": 250}]}]}),
    );
    env.push(("WORKMATE_VAULT_KEY".into(), KEY.into()));
    env
}

/// Runs `workmate args…` in `dir` with `env`, `input` on its standard input.
fn cli(dir: &Path, args: &[&str], env: &[(String, String)], input: &str) -> Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    run_with_input(dir, args, &env, input)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn messages(server: &Server, session: &str) -> Option<Vec<Value>> {
    let (status, body) = call(
        server,
        "GET",
        &format!("/v1/sessions/{session}/messages"),
        None,
    );
    (status == 200).then(|| body["messages"].as_array().cloned().unwrap_or_default())
}

fn answered(messages: &[Value]) -> bool {
    messages
        .last()
        .is_some_and(|m| m["role"] == "assistant" && m["content"] == ANSWER)
}

#[test]
fn a_backup_taken_while_turns_run_restores_into_a_working_service() {
    let live = tempfile::tempdir().unwrap();
    let env = settings(live.path());
    let put = cli(
        live.path(),
        &["vault", "put", "connectors/crm/token"],
        &env,
        "s3cret-value",
    );
    assert!(put.status.success(), "{}", text(&put));
    // Audited changes, so the restored audit chain has records to verify.
    for user in ["ana", "bo", "chen"] {
        let granted = cli(
            live.path(),
            &[
                "role", "grant", "--tenant", "default", "--user", user, "--role", "approver",
            ],
            &env,
            "",
        );
        assert!(granted.status.success(), "{}", text(&granted));
    }
    let server = start(live.path(), &env);
    let sessions: Vec<String> = (0..SESSIONS)
        .map(|i| {
            let (status, created) = call(&server, "POST", "/v1/sessions", None);
            assert_eq!(status, 201, "{created}");
            let id = created["session_id"].as_str().unwrap().to_owned();
            let message = json!({"type": "user_message", "text": format!("question {i}")});
            let (status, body) = call(
                &server,
                "POST",
                &format!("/v1/sessions/{id}/commands"),
                Some(message),
            );
            assert_eq!(status, 202, "{body}");
            id
        })
        .collect();
    // Taken while the turns stream their answers: the last one is still streaming.
    let last = sessions.last().unwrap();
    assert!(
        !messages(&server, last).is_some_and(|m| answered(&m)),
        "the backup is taken while turns run"
    );
    let backup = live.path().join("nightly.zip");
    let taken = cli(
        live.path(),
        &["backup", "--to", backup.to_str().unwrap()],
        &env,
        "",
    );
    assert!(taken.status.success(), "{}", text(&taken));
    assert_eq!(server.terminate(Duration::from_secs(10)).code(), Some(0));
    let again = cli(
        live.path(),
        &["backup", "--to", backup.to_str().unwrap()],
        &env,
        "",
    );
    assert_eq!(again.status.code(), Some(1), "an existing file is kept");

    // Without the vault key its secret needs, a restore is refused and writes nothing.
    let fresh = tempfile::tempdir().unwrap();
    let keyless: Vec<(String, String)> = env
        .iter()
        .filter(|(k, _)| k != "WORKMATE_VAULT_KEY")
        .cloned()
        .collect();
    let from = backup.to_str().unwrap();
    let refused = cli(fresh.path(), &["restore", "--from", from], &keyless, "");
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("master key id"),
        "{}",
        text(&refused)
    );
    assert!(!fresh.path().join("data/workmate.db").exists());

    let env = settings(fresh.path());
    let restored = cli(fresh.path(), &["restore", "--from", from], &env, "");
    assert!(restored.status.success(), "{}", text(&restored));
    assert!(
        text(&restored).contains("schema is up to date"),
        "{}",
        text(&restored)
    );
    let twice = cli(fresh.path(), &["restore", "--from", from], &env, "");
    assert_eq!(twice.status.code(), Some(1), "{}", text(&twice));
    assert!(
        text(&twice).contains("empty data folder"),
        "{}",
        text(&twice)
    );

    let server = start(fresh.path(), &env);
    for session in &sessions {
        let history = messages(&server, session).unwrap_or_else(|| panic!("{session} lost"));
        assert!(
            !history.is_empty(),
            "{session}: its message was stored before the backup"
        );
    }
    assert_eq!(server.terminate(Duration::from_secs(10)).code(), Some(0));
    let verified = cli(fresh.path(), &["audit", "verify"], &env, "");
    assert!(verified.status.success(), "{}", text(&verified));
    assert!(text(&verified).contains("intact"), "{}", text(&verified));
    let listed = cli(fresh.path(), &["vault", "list"], &env, "");
    assert!(
        text(&listed).contains("connectors/crm/token"),
        "{}",
        text(&listed)
    );
}
