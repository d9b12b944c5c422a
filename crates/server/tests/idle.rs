//! Idle sessions cost nothing resident, seen from outside: a few hundred sessions created,
//! watched over SSE, switched to plan mode, and one through an approval, leave the live-session
//! gauge at zero once `[engine] idle_session_seconds` has passed.

use std::time::Duration;

use serde_json::json;

use crate::crash::{
    PROCESS_PATIENCE, TOKEN, approve, call, finished_history, pending, prepare, start_counting,
};
use crate::support::{Server, http_get, read_stream_until};
use workmate_test_support::eventually_blocking;

/// The value of the series `series` (name and labels, as written on `/metrics`).
fn gauge(server: &Server, series: &str) -> u64 {
    let (_, text) = http_get(server.addr, "/metrics").unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("{series} is not on /metrics: {text}"))
}

fn live_sessions(server: &Server) -> u64 {
    gauge(server, "workmate_sessions_live")
}

#[test]
#[allow(clippy::print_stderr, reason = "the output documents the gauge")]
fn the_live_session_gauge_returns_to_zero_once_sessions_are_idle() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = prepare(dir.path(), 0);
    env.push(("WORKMATE__ENGINE__IDLE_SESSION_SECONDS".into(), "1".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let server = Server::start_with(dir.path(), &[], &env);

    // One session through a prompt and its answer.
    let (session, _) = start_counting(&server, dir.path());
    let item = eventually_blocking("the approval", PROCESS_PATIENCE, || {
        pending(&server).first().cloned()
    });
    approve(&server, item["id"].as_str().unwrap());
    finished_history(&server, &session);

    for _ in 0..200 {
        let (status, created) = call(&server, "POST", "/v1/sessions", None);
        assert_eq!(status, 201, "{created}");
        let id = created["session_id"].as_str().unwrap();
        let events = format!("/v1/sessions/{id}/events?from_seq=1");
        read_stream_until(
            server.addr,
            &events,
            TOKEN,
            "session_created",
            Duration::from_secs(5),
        )
        .unwrap();
        let mode = json!({"type": "set_mode", "mode": "plan"});
        let (status, body) = call(
            &server,
            "POST",
            &format!("/v1/sessions/{id}/commands"),
            Some(mode),
        );
        assert!(status < 300, "{status}: {body}");
    }
    let busy = live_sessions(&server);
    assert!(busy > 0, "the sessions were live while used");

    eventually_blocking(
        "no live session 20 s after they went idle",
        Duration::from_secs(20),
        || (live_sessions(&server) == 0).then_some(()),
    );
    eprintln!("live sessions: {busy} while used, 0 once idle");
    assert_eq!(gauge(&server, "workmate_card_pumps_live"), 0);
    // Every cache's entries are a series, within its bound.
    assert!(gauge(&server, "workmate_cache_items{cache=\"histories\"}") <= 256);
    assert!(gauge(&server, "workmate_cache_items{cache=\"tenants\"}") <= 10_000);
    assert!(gauge(&server, "workmate_cache_items{cache=\"card_views\"}") <= 512);
    // Dropped, not lost: a session is loaded again on its next use.
    let (status, body) = call(
        &server,
        "GET",
        &format!("/v1/sessions/{session}/messages"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body["messages"].as_array().is_some_and(|m| !m.is_empty()));
}
