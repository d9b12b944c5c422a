//! The kill test of reads: 40 sessions, each running six shell steps that alternate between a
//! read of its own folder and a write, while `workmate serve` is killed with SIGKILL five times
//! and started again on the same data. A read cut by a kill must run again (no "outcome unknown"
//! among reads); a write cut by one must never run twice. The test prints how many of each the
//! kills cut.
//!
//! Each read is `cat gate`, where `gate` is a named pipe the test answers 300 ms after a reader
//! opens it, so a read takes as long as a write and the kills land in both.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use workmate_protocol::{EventKind, Message, SessionId, TenantId};
use workmate_store::Store;

use crate::crash::{call, scripted, start};
use crate::kill::{Dice, read_store};
use crate::support::Server;
use workmate_test_support::eventually_blocking;

const SESSIONS: usize = 40;
const STEPS: usize = 6;
const KILLS: usize = 5;
/// How long a step (a read or a write) takes.
const STEP: Duration = Duration::from_millis(300);
/// `open(2)`'s `O_NONBLOCK` on Linux: opening a pipe's writing end fails at once without a reader.
const O_NONBLOCK: i32 = 0o4000;
const READ: &str = "cat gate";

/// A model that runs the steps one per answer, then says it is done.
fn script(dir: &Path) -> Vec<(String, String)> {
    let mut turns: Vec<Value> = (0..STEPS)
        .map(|step| {
            let command = if step % 2 == 0 {
                READ.to_owned()
            } else {
                format!("sh count.sh w{step}")
            };
            json!({"text": "Working.", "tool_calls": [
                {"name": "run_shell", "arguments": {"command": command}}]})
        })
        .collect();
    turns.push(json!({"text": "done"}));
    scripted(
        dir,
        &json!({"conversations": [{"when": "*", "turns": turns}]}),
    )
}

/// Answers every reader of `gate` after [`STEP`], until `stop`.
fn answer_reads(gate: &Path, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(gate);
        let Ok(mut pipe) = opened else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        std::thread::sleep(STEP);
        // A reader killed meanwhile makes this fail; the next one is answered anew.
        let _ = pipe.write_all(b"the gate opened\n");
    }
}

/// A session in auto mode whose folder holds `count.sh` and the `gate` pipe; its count file.
fn open_session(server: &Server, dir: &Path) -> (String, PathBuf) {
    let (status, created) = call(
        server,
        "POST",
        "/v1/sessions",
        Some(json!({"mode": "auto"})),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["session_id"].as_str().unwrap().to_owned();
    let workspace = dir.join("workspaces/default").join(&id);
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(
        workspace.join("count.sh"),
        format!("echo \"$1\" >> count.txt\nsleep {}\n", STEP.as_secs_f64()),
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(workspace.join("gate"))
        .status()
        .unwrap();
    assert!(made.success());
    (id, workspace)
}

/// What the kills did to the calls.
#[derive(Debug, Default)]
struct Counts {
    reads: usize,
    reads_cut_and_run_again: usize,
    reads_outcome_unknown: usize,
    /// Reads whose result is not what the gate said: failed, or never run.
    reads_without_the_gate: usize,
    writes: usize,
    writes_outcome_unknown: usize,
    double_executions: usize,
    turns_open: usize,
}

async fn count(store: &Store, sessions: &[(String, PathBuf)]) -> Counts {
    let tenant = TenantId::from("default");
    let mut counts = Counts::default();
    for (id, workspace) in sessions {
        let session = SessionId::from(id.clone());
        let events = store
            .events()
            .list_after(&tenant, &session, 0, 100_000)
            .await
            .unwrap();
        let mut starts: HashMap<String, usize> = HashMap::new();
        let (mut turns, mut ended) = (0, 0);
        for event in &events {
            match &event.kind {
                EventKind::ToolStarted { tool_call_id, .. } => {
                    *starts.entry(tool_call_id.to_string()).or_default() += 1;
                }
                EventKind::TurnStart { .. } => turns += 1,
                kind if kind.is_terminal() => ended += 1,
                _ => {}
            }
        }
        counts.turns_open += turns - ended.min(turns);
        let history = store.messages().list(&tenant, &session).await.unwrap();
        let results: HashMap<String, String> = history
            .iter()
            .filter_map(|m| match m {
                Message::Tool {
                    tool_call_id,
                    content,
                    ..
                } => Some((tool_call_id.to_string(), content.clone())),
                _ => None,
            })
            .collect();
        for message in &history {
            let Message::Assistant { tool_calls, .. } = message else {
                continue;
            };
            for call in tool_calls {
                let unknown = results
                    .get(call.id.as_str())
                    .is_some_and(|r| r.contains("outcome unknown"));
                if call.arguments["command"] == READ {
                    counts.reads += 1;
                    counts.reads_outcome_unknown += usize::from(unknown);
                    let read = results
                        .get(call.id.as_str())
                        .is_some_and(|r| r.contains("the gate opened"));
                    counts.reads_without_the_gate += usize::from(!read);
                    let started = starts.get(call.id.as_str()).copied().unwrap_or(0);
                    counts.reads_cut_and_run_again += usize::from(started > 1);
                } else {
                    counts.writes += 1;
                    counts.writes_outcome_unknown += usize::from(unknown);
                }
            }
        }
        let runs = std::fs::read_to_string(workspace.join("count.txt")).unwrap_or_default();
        let mut per_marker: BTreeMap<&str, usize> = BTreeMap::new();
        for line in runs.lines() {
            *per_marker.entry(line).or_default() += 1;
        }
        counts.double_executions += per_marker.values().filter(|&&n| n > 1).count();
    }
    counts
}

/// Whether every session's turn is over.
fn all_over(server: &Server, sessions: &[(String, PathBuf)]) -> bool {
    sessions.iter().all(|(id, _)| {
        let (_, body) = call(server, "GET", &format!("/v1/sessions/{id}/messages"), None);
        body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|last| {
                let answered = last["role"] == "assistant"
                    && last["tool_calls"].as_array().is_none_or(Vec::is_empty);
                answered || (last["role"] == "notice" && last["kind"] == "error")
            })
    })
}

#[test]
#[allow(
    clippy::print_stderr,
    reason = "the test prints how many reads and writes the kills cut"
)]
fn reads_cut_by_sigkills_run_again_and_writes_never_twice() {
    let began = Instant::now();
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut dice = Dice(seed);
    let dir = tempfile::tempdir().unwrap();
    let env = script(dir.path());
    let mut server = start(dir.path(), &env);
    let sessions: Vec<(String, PathBuf)> = (0..SESSIONS)
        .map(|_| open_session(&server, dir.path()))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let gates: Vec<_> = sessions
        .iter()
        .map(|(_, workspace)| {
            let (gate, stop) = (workspace.join("gate"), Arc::clone(&stop));
            std::thread::spawn(move || answer_reads(&gate, &stop))
        })
        .collect();
    for (id, _) in &sessions {
        let message = json!({"type": "user_message", "text": "work"});
        let (status, _) = call(
            &server,
            "POST",
            &format!("/v1/sessions/{id}/commands"),
            Some(message),
        );
        assert_eq!(status, 202);
    }
    for _ in 0..KILLS {
        std::thread::sleep(Duration::from_millis(300 + dice.below(900)));
        server.crash();
        server = start(dir.path(), &env);
    }
    // A turn the last kill cut may wait out a session lease (30 s) before it is taken up, and
    // then still has its remaining steps to run.
    eventually_blocking(
        "every session's turn to end",
        Duration::from_secs(90),
        || all_over(&server, &sessions).then_some(()),
    );
    assert_eq!(server.terminate(Duration::from_secs(10)).code(), Some(0));
    stop.store(true, Ordering::Relaxed);
    for gate in gates {
        gate.join().unwrap();
    }

    let counts = read_store(dir.path(), async |store| count(store, &sessions).await);
    eprintln!(
        "kill test of reads (seed {seed}): {KILLS} SIGKILLs, {:.1} s\n  reads {}: cut and run \
         again {}, \"outcome unknown\" {}\n  writes {}: \"outcome unknown\" {}, run twice {}",
        began.elapsed().as_secs_f64(),
        counts.reads,
        counts.reads_cut_and_run_again,
        counts.reads_outcome_unknown,
        counts.writes,
        counts.writes_outcome_unknown,
        counts.double_executions,
    );
    assert_eq!(counts.reads_outcome_unknown, 0, "{counts:?}");
    assert_eq!(
        counts.reads_without_the_gate, 0,
        "every read ran: {counts:?}"
    );
    assert_eq!(counts.double_executions, 0, "{counts:?}");
    assert_eq!(counts.turns_open, 0, "{counts:?}");
}
