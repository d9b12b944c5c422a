//! Draining on SIGTERM: a replica asked to stop takes no new turns, lets a working turn finish
//! within `[server] shutdown_grace_ms`, leaves a parked turn (or one still working at the
//! deadline) open, releases its leases and exits; another replica sharing the database and
//! Redis takes the sessions up at once, without waiting out the lease.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::crash::{
    PROCESS_PATIENCE, TOKEN, approve, assert_answered_once, call, finished_history, pending,
    prepare, runs, start_counting, with_database,
};
use crate::support::{Server, fresh_database, test_redis};
use workmate_test_support::eventually_blocking;

/// A server in `dir` whose tool sleeps `seconds`, on `database` (`None`: SQLite), coordinating
/// through `redis` (URL, key prefix) when given, with `grace_ms` to drain.
fn start(
    dir: &Path,
    seconds: u32,
    database: Option<&str>,
    redis: Option<(&str, &str)>,
    grace_ms: u32,
) -> Server {
    let mut env = with_database(prepare(dir, seconds), database);
    env.push((
        "WORKMATE__SERVER__SHUTDOWN_GRACE_MS".into(),
        grace_ms.to_string(),
    ));
    if let Some((url, prefix)) = redis {
        env.push(("WORKMATE__COORDINATOR__REDIS_URL".into(), url.to_owned()));
        env.push((
            "WORKMATE__COORDINATOR__KEY_PREFIX".into(),
            prefix.to_owned(),
        ));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_with(dir, &[], &env)
}

/// The session's stored event kinds, in order.
fn event_kinds(server: &Server, session: &str) -> Vec<String> {
    let path = format!("/v1/sessions/{session}/events?from_seq=1");
    let stream = crate::support::read_stream_until(
        server.addr,
        &path,
        TOKEN,
        "event: turn_end",
        Duration::from_secs(20),
    )
    .unwrap_or_else(|e| panic!("the session's events: {e}"));
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .map(str::to_owned)
        .collect()
}

#[test]
#[allow(
    clippy::print_stderr,
    reason = "the output documents how long the drain took"
)]
fn a_turn_working_at_sigterm_finishes_before_the_process_exits() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), 2, None, None, 20_000);
    let (session, count_file) = start_counting(&server, dir.path());
    let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
        pending(&server).first().cloned()
    });
    approve(&server, item["id"].as_str().unwrap());
    eventually_blocking("the tool to start", PROCESS_PATIENCE, || {
        (runs(&count_file) == 1).then_some(())
    });
    let asked = Instant::now();
    let status = server.terminate(Duration::from_secs(20));
    eprintln!(
        "the drain took {:.1} s (the tool had 2 s to go)",
        asked.elapsed().as_secs_f64()
    );
    assert_eq!(status.code(), Some(0));

    // Started again: the turn had ended before the process did; nothing is taken up again.
    let server = start(dir.path(), 2, None, None, 20_000);
    let history = finished_history(&server, &session);
    assert_answered_once(&history);
    assert_eq!(runs(&count_file), 1, "the tool ran once");
    let kinds = event_kinds(&server, &session);
    assert!(!kinds.iter().any(|k| k == "interrupted"), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| *k == "turn_end").count(),
        1,
        "{kinds:?}"
    );
}

/// Two replicas on one database and Redis; a turn parked on an approval on the first.
struct TwoReplicas {
    a: Server,
    b: Server,
    session: String,
    counts: [std::path::PathBuf; 2],
    _dirs: [tempfile::TempDir; 2],
}

fn two_replicas(variable: &str, seconds: u32, grace_ms: u32) -> TwoReplicas {
    let (redis, prefix) = test_redis("drain");
    let url = fresh_database(variable);
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let redis = Some((redis.as_str(), prefix.as_str()));
    let a = start(dirs[0].path(), seconds, Some(&url), redis, grace_ms);
    let b = start(dirs[1].path(), seconds, Some(&url), redis, grace_ms);
    let (session, on_a) = start_counting(&a, dirs[0].path());
    // The same script in b's workspace, in case b runs the call (it must not run it twice).
    let on_b = dirs[1].path().join("workspaces/default").join(&session);
    std::fs::create_dir_all(&on_b).unwrap();
    std::fs::copy(on_a.with_file_name("count.sh"), on_b.join("count.sh")).unwrap();
    TwoReplicas {
        a,
        b,
        session,
        counts: [on_a, on_b.join("count.txt")],
        _dirs: dirs,
    }
}

#[allow(clippy::print_stderr, reason = "the output documents the hand-over")]
fn a_parked_turn_is_taken_up_by_the_other_replica_at_once_after_a_drain(variable: &str) {
    let TwoReplicas {
        a,
        b,
        session,
        counts,
        _dirs,
    } = two_replicas(variable, 0, 20_000);
    let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
        pending(&a).first().cloned()
    });
    let asked = Instant::now();
    assert_eq!(a.terminate(Duration::from_secs(10)).code(), Some(0));
    let drained = asked.elapsed();
    assert!(
        drained < Duration::from_secs(5),
        "{variable}: a parked turn does not hold the drain: {drained:?}"
    );
    let answered = Instant::now();
    approve(&b, item["id"].as_str().unwrap());
    let history = finished_history(&b, &session);
    let finished = answered.elapsed();
    eprintln!(
        "{variable}: drained in {:.1} s; the other replica finished the turn {:.1} s after the answer",
        drained.as_secs_f64(),
        finished.as_secs_f64()
    );
    assert!(
        finished < Duration::from_secs(15),
        "{variable}: the released lease was taken at once, not after the 30 s term: {finished:?}"
    );
    assert_answered_once(&history);
    assert_eq!(counts.iter().map(|f| runs(f)).sum::<usize>(), 1);
}

workmate_test_support::needs! { [postgres, redis]
    #[test]
    fn on_postgres_a_parked_turn_is_taken_up_by_the_other_replica_at_once_after_a_drain() {
        a_parked_turn_is_taken_up_by_the_other_replica_at_once_after_a_drain(
            "WORKMATE_TEST_POSTGRES_URL",
        );
    }
}

workmate_test_support::needs! { [mysql, redis]
    #[test]
    fn on_mariadb_a_parked_turn_is_taken_up_by_the_other_replica_at_once_after_a_drain() {
        a_parked_turn_is_taken_up_by_the_other_replica_at_once_after_a_drain("WORKMATE_TEST_MYSQL_URL");
    }
}

workmate_test_support::needs! { [postgres, redis]
    #[test]
    #[allow(clippy::print_stderr, reason = "the output documents the hand-over")]
    fn on_postgres_a_turn_still_working_at_the_deadline_is_finished_by_the_other_replica() {
        let variable = "WORKMATE_TEST_POSTGRES_URL";
        // The tool runs 5 s; the drain may take 1.5 s.
        let TwoReplicas {
            a,
            b,
            session,
            counts,
            _dirs,
        } = two_replicas(variable, 5, 1_500);
        let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
            pending(&a).first().cloned()
        });
        approve(&a, item["id"].as_str().unwrap());
        eventually_blocking("the tool to start", PROCESS_PATIENCE, || {
            (runs(&counts[0]) == 1).then_some(())
        });
        let asked = Instant::now();
        assert_eq!(a.terminate(Duration::from_secs(10)).code(), Some(0));
        let drained = asked.elapsed();
        let history = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            finished_history(&b, &session)
        }))
        .unwrap_or_else(|_| panic!("b never took the turn up; its log:\n{}", b.log_text()));
        let finished = asked.elapsed();
        eprintln!(
            "drained in {:.1} s (grace 1.5 s); the other replica finished the turn {:.1} s after the signal",
            drained.as_secs_f64(),
            finished.as_secs_f64()
        );
        assert!(
            drained < Duration::from_secs(4),
            "the drain kept to its grace period: {drained:?}"
        );
        assert!(
            finished < Duration::from_secs(15),
            "taken up at once, not after the 30 s lease: {finished:?}"
        );
        assert_answered_once(&history);
        assert_eq!(
            counts.iter().map(|f| runs(f)).sum::<usize>(),
            1,
            "the cut call was not run again"
        );
        let (_, listed) = call(&b, "GET", "/v1/inbox?state=pending", None);
        assert_eq!(
            listed["items"],
            serde_json::json!([]),
            "nothing asked again"
        );
    }
}
