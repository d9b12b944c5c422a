//! Two `workmate serve` processes on one Postgres or MariaDB database: a turn parked on an
//! approval in one process, the answer sent to the other. The process that holds the session's
//! lease finishes the turn; the approved call runs exactly once, and the answer streams to a
//! client of the first process. And when the process that drives a session dies, the other one
//! takes the session over once its lease runs out, and finishes the turn. With a shared Redis
//! coordinator, a client of one process watches live a turn the other drives.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::crash::{
    PROCESS_PATIENCE, TOKEN, approve, assert_answered_once, call, pending, prepare, runs,
};
use crate::support::{Server, fresh_database, read_stream_until, test_redis};
use workmate_test_support::eventually_blocking;

/// A server on the shared database, answering with the scripted model, coordinating with the
/// other processes through `redis` (its URL and a key prefix of this test's own) when given.
fn start_coordinated(dir: &Path, url: &str, redis: Option<(&str, &str)>) -> Server {
    let mut env = prepare(dir, 0);
    env.push(("WORKMATE__DATABASE__URL".into(), url.to_owned()));
    if let Some((redis, prefix)) = redis {
        env.push(("WORKMATE__COORDINATOR__REDIS_URL".into(), redis.to_owned()));
        env.push((
            "WORKMATE__COORDINATOR__KEY_PREFIX".into(),
            prefix.to_owned(),
        ));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_with(dir, &[], &env)
}

/// Places the counting script in the session's workspace of `dir` (the sandbox lets it write
/// only there); returns the file each run appends a line to.
fn place_script(dir: &Path, session: &str) -> PathBuf {
    let workspace = dir.join("workspaces/default").join(session);
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("count.sh"), "echo run >> count.txt\n").unwrap();
    workspace.join("count.txt")
}

/// Two processes on one database, and a turn parked on an approval in the first.
struct Parked {
    a: Server,
    b: Server,
    session: String,
    /// The files the approved call appends to, one per process's workspace.
    counts: [PathBuf; 2],
    item: String,
    _dirs: [tempfile::TempDir; 2],
}

/// Starts both processes on `url` and parks a turn on the first.
fn park_on_first(variable: &str, url: &str) -> Parked {
    park_on_first_coordinated(variable, url, None)
}

/// [`park_on_first`], the processes coordinating through `redis` when given.
fn park_on_first_coordinated(variable: &str, url: &str, redis: Option<(&str, &str)>) -> Parked {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let a = start_coordinated(dirs[0].path(), url, redis);
    let b = start_coordinated(dirs[1].path(), url, redis);
    let (status, created) = call(&a, "POST", "/v1/sessions", None);
    assert_eq!(status, 201, "{variable}: {created}");
    let session = created["session_id"].as_str().unwrap().to_owned();
    let counts = [
        place_script(dirs[0].path(), &session),
        place_script(dirs[1].path(), &session),
    ];
    let message = serde_json::json!({"type": "user_message", "text": "count"});
    let path = format!("/v1/sessions/{session}/commands");
    assert_eq!(call(&a, "POST", &path, Some(message)).0, 202, "{variable}");
    let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
        pending(&a).first().cloned()
    });
    let item = item["id"].as_str().unwrap().to_owned();
    Parked {
        a,
        b,
        session,
        counts,
        item,
        _dirs: dirs,
    }
}

#[allow(
    clippy::print_stderr,
    reason = "the test output documents how often the approved call ran"
)]
fn an_answer_sent_to_the_other_process_runs_the_call_once(variable: &str) {
    let url = fresh_database(variable);
    let Parked {
        a,
        b,
        session,
        counts,
        item,
        _dirs,
    } = park_on_first(variable, &url);
    // A client of the first process watches the session from here on.
    let events = format!("/v1/sessions/{session}/events?from_seq=1");
    let stream = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            read_stream_until(a.addr, &events, TOKEN, "turn_end", Duration::from_secs(30))
        });
        // Let the watcher subscribe before the answer is sent.
        std::thread::sleep(Duration::from_millis(300));
        approve(&b, &item);
        watcher.join().unwrap()
    });
    let stream = stream.unwrap_or_else(|e| panic!("{variable}: the answer did not stream: {e}"));
    assert!(
        stream.contains(r#""text":"done""#) || stream.contains(r#""content":"done""#),
        "{variable}: the final answer streamed: {stream}"
    );

    // The client of the first process gets the answer.
    let history = eventually_blocking(
        "the final answer on the first process",
        PROCESS_PATIENCE,
        || {
            let (_, body) = call(&a, "GET", &format!("/v1/sessions/{session}/messages"), None);
            let messages = body["messages"].as_array()?.clone();
            let last = messages.last()?;
            (last["role"] == "assistant" && last["content"] == "done").then_some(messages)
        },
    );
    let runs: usize = counts.iter().map(|file| runs(file)).sum();
    eprintln!("{variable}: the approved call ran {runs} time(s)");
    assert_eq!(runs, 1, "{variable}: the approved call ran exactly once");
    assert_answered_once(&history);
    assert!(pending(&b).is_empty(), "{variable}: nothing left to answer");
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn on_postgres_an_answer_sent_to_the_other_process_runs_the_call_once() {
        an_answer_sent_to_the_other_process_runs_the_call_once("WORKMATE_TEST_POSTGRES_URL");
    }
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn on_mariadb_an_answer_sent_to_the_other_process_runs_the_call_once() {
        an_answer_sent_to_the_other_process_runs_the_call_once("WORKMATE_TEST_MYSQL_URL");
    }
}

#[allow(
    clippy::print_stderr,
    reason = "the test output documents how long the takeover took"
)]
fn a_turn_left_by_a_killed_process_is_finished_by_the_other(variable: &str) {
    let url = fresh_database(variable);
    let Parked {
        a,
        b,
        session,
        counts,
        item,
        _dirs,
    } = park_on_first(variable, &url);
    a.crash();
    let killed = Instant::now();

    // The answer is stored at once; the turn waits for the dead process's lease to run out.
    approve(&b, &item);
    let deadline = killed + Duration::from_secs(90);
    let history = loop {
        let (_, body) = call(&b, "GET", &format!("/v1/sessions/{session}/messages"), None);
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if messages
            .last()
            .is_some_and(|m| m["role"] == "assistant" && m["content"] == "done")
        {
            break messages;
        }
        assert!(
            Instant::now() < deadline,
            "{variable}: the other process never finished the turn: {messages:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!(
        "{variable}: the other process finished the turn {:.1} s after the kill",
        killed.elapsed().as_secs_f64()
    );
    let runs: usize = counts.iter().map(|file| runs(file)).sum();
    assert_eq!(runs, 1, "{variable}: the approved call ran exactly once");
    assert_answered_once(&history);
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn on_postgres_a_turn_left_by_a_killed_process_is_finished_by_the_other() {
        a_turn_left_by_a_killed_process_is_finished_by_the_other("WORKMATE_TEST_POSTGRES_URL");
    }
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn on_mariadb_a_turn_left_by_a_killed_process_is_finished_by_the_other() {
        a_turn_left_by_a_killed_process_is_finished_by_the_other("WORKMATE_TEST_MYSQL_URL");
    }
}

fn a_client_of_one_process_watches_live_a_turn_the_other_drives(variable: &str) {
    let (redis, prefix) = test_redis("replicas");
    let url = fresh_database(variable);
    let Parked {
        a,
        b,
        session,
        counts,
        item,
        _dirs,
    } = park_on_first_coordinated(variable, &url, Some((&redis, &prefix)));
    // A message sent to b while a's turn runs is stored and handed to a, which drives the
    // session: it steers the running turn there, as it would have had it been sent to a.
    let message = serde_json::json!({"type": "user_message", "text": "and another"});
    let (status, queued) = call(
        &b,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    );
    assert_eq!(status, 202, "{variable}: {queued}");
    assert_eq!(queued["accepted"], "queued", "{variable}: {queued}");
    // Live events only (no replay from the store): the answer's deltas are never stored, so
    // seeing them on b means they came from a, which drives the session.
    let events = format!("/v1/sessions/{session}/events");
    let stream = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            read_stream_until(b.addr, &events, TOKEN, "turn_end", Duration::from_secs(30))
        });
        // Let the watcher subscribe before the answer is sent.
        std::thread::sleep(Duration::from_millis(500));
        approve(&a, &item);
        watcher.join().unwrap()
    });
    let stream =
        stream.unwrap_or_else(|e| panic!("{variable}: b saw nothing of a's turn live: {e}"));
    for kind in [
        "tool_started",
        "tool_finished",
        "assistant_delta",
        "turn_end",
    ] {
        assert!(
            stream.contains(&format!("event: {kind}")),
            "{variable}: b's client saw {kind} live: {stream}"
        );
    }
    let total: usize = counts.iter().map(|file| runs(file)).sum();
    assert_eq!(
        total, 1,
        "{variable}: the approved call ran exactly once, on a"
    );
    assert_eq!(runs(&counts[0]), 1, "{variable}: a drove the turn");
    // The coordinator's series show it: a handed events over, b received them.
    let series = |server: &Server, name: &str| -> u64 {
        let (_, text) = crate::support::http_get(server.addr, "/metrics").unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} is not on /metrics: {text}"))
    };
    assert_eq!(series(&a, "workmate_coordinator_shared"), 1);
    assert!(series(&a, "workmate_coordinator_events_published_total") > 0);
    assert!(series(&b, "workmate_coordinator_events_received_total") > 0);
    // The message b stored reached the session once, inside a's turn: after the approved
    // call's result, before the answer.
    let history = eventually_blocking("the steering message", PROCESS_PATIENCE, || {
        let (_, body) = call(&a, "GET", &format!("/v1/sessions/{session}/messages"), None);
        let history = body["messages"].as_array()?.clone();
        let last = history.last()?;
        (last["role"] == "assistant" && last["content"] == "done").then_some(history)
    });
    let steered: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "user" && m["content"] == "and another")
        .map(|(i, _)| i)
        .collect();
    let result = history.iter().position(|m| m["role"] == "tool");
    assert_eq!(steered.len(), 1, "{variable}: stored once: {history:#?}");
    assert!(
        result.is_some_and(|r| r < steered[0]) && steered[0] < history.len() - 1,
        "{variable}: it steered a's turn: {history:#?}"
    );
}

workmate_test_support::needs! { [postgres, redis]
    #[test]
    fn on_postgres_a_client_of_one_process_watches_live_a_turn_the_other_drives() {
        a_client_of_one_process_watches_live_a_turn_the_other_drives("WORKMATE_TEST_POSTGRES_URL");
    }
}

workmate_test_support::needs! { [mysql, redis]
    #[test]
    fn on_mariadb_a_client_of_one_process_watches_live_a_turn_the_other_drives() {
        a_client_of_one_process_watches_live_a_turn_the_other_drives("WORKMATE_TEST_MYSQL_URL");
    }
}
