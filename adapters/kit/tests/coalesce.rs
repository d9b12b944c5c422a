//! The coalescer against a fake platform in paused time.

use std::sync::Arc;
use std::time::Duration;

use workmate_adapter::{AdapterError, CardStore, Coalescer, Error, MemoryCardStore, PostedCard};
use workmate_protocol::Surface;

use crate::support::{Call, FakePlatform, card, policy, state, target};

const SECOND: Duration = Duration::from_secs(1);

fn coalescer(platform: &Arc<FakePlatform>, store: &Arc<MemoryCardStore>) -> Coalescer {
    Coalescer::new(platform.clone(), store.clone(), policy())
}

/// Successful calls never go backwards, and updates carry increasing versions.
fn assert_monotonic(calls: &[Call]) {
    let ok: Vec<_> = calls.iter().filter(|c| c.ok()).collect();
    for pair in ok.windows(2) {
        assert!(
            pair[0].state() < pair[1].state(),
            "older state after newer: {calls:#?}"
        );
    }
    let versions: Vec<_> = calls
        .iter()
        .filter_map(|c| match c {
            Call::Update { version, .. } => Some(*version),
            Call::Post { .. } => None,
        })
        .collect();
    assert!(versions.windows(2).all(|v| v[0] < v[1]), "{versions:?}");
}

#[tokio::test(start_paused = true)]
async fn a_hundred_rapid_updates_become_a_handful_ending_in_the_final_state() {
    let platform = FakePlatform::new(SECOND);
    let store = Arc::new(MemoryCardStore::new());
    let c = coalescer(&platform, &store);
    for n in 0..100 {
        c.submit(card("turn:1"), target(), state(n)).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    c.flush(&card("turn:1")).await.unwrap();

    let calls = platform.calls();
    assert!((2..=3).contains(&calls.len()), "{calls:#?}");
    assert!(matches!(&calls[0], Call::Post { chat_id, .. } if chat_id == "C1"));
    assert_eq!(calls[0].state(), 0, "the first state goes out at once");
    assert_eq!(calls.last().unwrap().state(), 99);
    assert!(
        calls
            .iter()
            .skip(1)
            .all(|c| matches!(c, Call::Update { message_id, .. } if message_id == "m1"))
    );
    for pair in calls.windows(2) {
        assert!(pair[1].at() - pair[0].at() >= SECOND, "{calls:#?}");
    }
    assert_monotonic(&calls);
}

#[tokio::test(start_paused = true)]
async fn the_card_is_at_most_one_interval_behind_and_never_goes_back() {
    // A slow platform (300 ms a call) and a steady stream of states over five seconds.
    let platform = FakePlatform::with_latency(SECOND, Duration::from_millis(300));
    let store = Arc::new(MemoryCardStore::new());
    let c = coalescer(&platform, &store);
    let mut submitted = Vec::new();
    let start = tokio::time::Instant::now();
    for n in 0..100 {
        c.submit(card("turn:1"), target(), state(n)).unwrap();
        submitted.push((start.elapsed(), n));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.flush(&card("turn:1")).await.unwrap();

    let calls = platform.calls();
    assert_monotonic(&calls);
    assert!(calls.len() <= 7, "about one call a second: {calls:#?}");
    for pair in calls.windows(2) {
        assert!(pair[1].at() - pair[0].at() >= SECOND, "{calls:#?}");
    }
    // Every state is on screen, or superseded, within one interval plus one call's latency.
    for (at, n) in submitted {
        let shown = calls.iter().any(|c| {
            c.state() >= n
                && c.at() + Duration::from_millis(300) <= at + SECOND + Duration::from_millis(300)
        });
        assert!(shown, "state {n} submitted at {at:?} was late: {calls:#?}");
    }
    assert_eq!(calls.last().unwrap().state(), 99);
}

#[tokio::test(start_paused = true)]
async fn a_429_waits_for_retry_after_and_then_sends_the_newest_state() {
    let platform = FakePlatform::new(SECOND);
    platform.script([
        None,
        Some(AdapterError::RateLimited {
            retry_after: Duration::from_secs(5),
        }),
    ]);
    let store = Arc::new(MemoryCardStore::new());
    let c = coalescer(&platform, &store);
    c.submit(card("turn:1"), target(), state(0)).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    c.submit(card("turn:1"), target(), state(1)).unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    c.submit(card("turn:1"), target(), state(2)).unwrap();
    c.flush(&card("turn:1")).await.unwrap();

    let calls = platform.calls();
    let summary: Vec<_> = calls
        .iter()
        .map(|c| (c.at().as_millis(), c.state(), c.ok()))
        .collect();
    assert_eq!(summary, [(0, 0, true), (1000, 1, false), (6000, 2, true)]);
    assert_monotonic(&calls);
}

#[tokio::test(start_paused = true)]
async fn transient_failures_back_off_and_are_retried() {
    let platform = FakePlatform::new(SECOND);
    platform.script([
        Some(AdapterError::Transient("503".into())),
        Some(AdapterError::Transient("timeout".into())),
    ]);
    let store = Arc::new(MemoryCardStore::new());
    let c = coalescer(&platform, &store);
    c.submit(card("turn:1"), target(), state(0)).unwrap();
    c.flush(&card("turn:1")).await.unwrap();

    let summary: Vec<_> = platform
        .calls()
        .iter()
        .map(|c| (c.at().as_millis(), c.ok()))
        .collect();
    assert_eq!(summary, [(0, false), (500, false), (1500, true)]);
    let stored = store
        .get(&card("turn:1"), workmate_protocol::Surface::Sandbox)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.posted.message_id, "m1");
}

#[tokio::test(start_paused = true)]
async fn a_refused_state_is_reported_and_the_next_one_is_still_tried() {
    let platform = FakePlatform::new(SECOND);
    platform.script([None, Some(AdapterError::Rejected("invalid_blocks".into()))]);
    let store = Arc::new(MemoryCardStore::new());
    let c = coalescer(&platform, &store);
    c.submit(card("turn:1"), target(), state(0)).unwrap();
    c.flush(&card("turn:1")).await.unwrap();
    c.submit(card("turn:1"), target(), state(1)).unwrap();
    let err = c.flush(&card("turn:1")).await.unwrap_err();
    assert!(
        matches!(&err, Error::Delivery { reason, .. } if reason.contains("invalid_blocks")),
        "{err}"
    );
    c.submit(card("turn:1"), target(), state(2)).unwrap();
    c.flush(&card("turn:1")).await.unwrap();

    let calls = platform.calls();
    let states: Vec<_> = calls.iter().map(|c| (c.state(), c.ok())).collect();
    assert_eq!(
        states,
        [(0, true), (1, false), (2, true)],
        "a refusal is not retried"
    );
}

#[tokio::test(start_paused = true)]
async fn a_card_posted_before_a_restart_is_updated_after_it() {
    let store = Arc::new(MemoryCardStore::new());
    let before = FakePlatform::new(SECOND);
    let c = coalescer(&before, &store);
    c.submit(card("turn:1"), target(), state(0)).unwrap();
    c.submit(card("turn:1"), target(), state(1)).unwrap();
    c.shutdown(Duration::from_secs(10)).await;
    assert!(matches!(
        c.submit(card("turn:1"), target(), state(2)),
        Err(Error::ShuttingDown)
    ));
    let posted = before.calls();
    assert_eq!(posted.len(), 1, "{posted:#?}");
    assert_eq!(posted[0].state(), 1, "only the latest state went out");

    let after = FakePlatform::new(SECOND);
    let c = coalescer(&after, &store);
    c.submit(card("turn:1"), target(), state(2)).unwrap();
    c.flush(&card("turn:1")).await.unwrap();
    let calls = after.calls();
    assert_eq!(calls.len(), 1);
    assert!(
        matches!(&calls[0], Call::Update { message_id, version: 1, state, .. } if message_id == "m1" && state == 2),
        "{calls:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_post_cut_short_before_its_id_was_stored_is_finished_not_repeated() {
    // A process announced the post and died: once after the platform took it, once before.
    for (on_the_platform, expected) in [(true, "update"), (false, "post")] {
        let store = Arc::new(MemoryCardStore::new());
        let platform = FakePlatform::new(SECOND);
        let announced = PostedCard {
            chat_id: target().chat_id,
            message_id: String::new(),
        };
        store
            .intend(&card("turn:1"), Surface::Sandbox, &announced)
            .await
            .unwrap();
        if on_the_platform {
            platform.already_posted(&card("turn:1"), "m-before");
        }
        let c = coalescer(&platform, &store);
        c.submit(card("turn:1"), target(), state(5)).unwrap();
        c.flush(&card("turn:1")).await.unwrap();
        let calls = platform.calls();
        assert_eq!(calls.len(), 1, "{expected}: {calls:#?}");
        match (&calls[0], expected) {
            (
                Call::Update {
                    message_id, state, ..
                },
                "update",
            ) => {
                assert_eq!((message_id.as_str(), state.as_i64()), ("m-before", Some(5)));
            }
            (Call::Post { state, .. }, "post") => assert_eq!(state.as_i64(), Some(5)),
            (call, _) => panic!("{expected} expected: {call:#?}"),
        }
        let stored = store
            .get(&card("turn:1"), Surface::Sandbox)
            .await
            .unwrap()
            .unwrap();
        assert!(stored.confirmed, "{expected}");
    }
}

#[tokio::test(start_paused = true)]
async fn cards_are_paced_independently_and_tasks_end_when_idle() {
    let platform = FakePlatform::new(SECOND);
    platform.script([
        None,
        Some(AdapterError::RateLimited {
            retry_after: Duration::from_secs(30),
        }),
    ]);
    let store = Arc::new(MemoryCardStore::new());
    let c = coalescer(&platform, &store);
    // Card A is posted, then its first update is rate-limited for 30 s.
    c.submit(card("a"), target(), state(0)).unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    c.submit(card("a"), target(), state(1)).unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Card B goes out at once all the same.
    c.submit(card("b"), target(), state(100)).unwrap();
    c.flush(&card("b")).await.unwrap();
    assert_eq!(platform.calls().last().unwrap().state(), 100);
    assert_eq!(
        platform.calls().last().unwrap().at(),
        Duration::from_secs(2) + Duration::from_millis(10)
    );
    assert_eq!(c.active(), 2);

    c.flush(&card("a")).await.unwrap();
    assert_eq!(
        platform.calls().last().unwrap().at(),
        Duration::from_secs(31)
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(c.active(), 0, "idle cards hold no task");
}

#[tokio::test(start_paused = true)]
async fn shutdown_gives_up_after_its_grace_and_answers_flushes() {
    let platform = FakePlatform::new(SECOND);
    let always_limited = (0..10).map(|_| {
        Some(AdapterError::RateLimited {
            retry_after: Duration::from_secs(60),
        })
    });
    platform.script(always_limited);
    let store = Arc::new(MemoryCardStore::new());
    let c = Arc::new(coalescer(&platform, &store));
    c.submit(card("turn:1"), target(), state(0)).unwrap();
    let flusher = tokio::spawn({
        let c = c.clone();
        async move { c.flush(&card("turn:1")).await }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let start = tokio::time::Instant::now();
    c.shutdown(Duration::from_secs(5)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert!(matches!(
        flusher.await.unwrap(),
        Err(Error::Delivery { .. })
    ));
    assert_eq!(c.active(), 0);
}
