//! Retry policy: Retry-After honoured, backoff doubling to a cap, refusals never retried.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::time::Instant;
use workmate_adapter::{AdapterError, RetryPolicy, with_retry};

use crate::support::policy;

fn transient() -> AdapterError {
    AdapterError::Transient("502".to_owned())
}

#[test]
fn delays_follow_the_error() {
    let p = policy();
    let limited = AdapterError::RateLimited {
        retry_after: Duration::from_secs(7),
    };
    assert_eq!(p.delay(1, &limited), Some(Duration::from_secs(7)));
    let waits: Vec<_> = (1..8).map(|n| p.delay(n, &transient()).unwrap()).collect();
    let ms: Vec<_> = waits.iter().map(Duration::as_millis).collect();
    assert_eq!(ms, [500, 1000, 2000, 4000, 8000, 16000, 30000]);
    assert_eq!(p.delay(8, &transient()), None, "eight attempts in all");
    assert_eq!(
        p.delay(1, &AdapterError::Rejected("invalid_blocks".into())),
        None
    );
    let too_long = AdapterError::RateLimited {
        retry_after: Duration::from_secs(3600),
    };
    assert_eq!(p.delay(1, &too_long), None, "beyond max_retry_after");
}

#[test]
fn jitter_only_shortens_backoff_to_at_most_half() {
    let p = RetryPolicy::default();
    for _ in 0..100 {
        let wait = p.delay(3, &transient()).unwrap();
        assert!(
            wait >= Duration::from_secs(1) && wait <= Duration::from_secs(2),
            "{wait:?}"
        );
    }
    let limited = AdapterError::RateLimited {
        retry_after: Duration::from_secs(3),
    };
    assert_eq!(p.delay(1, &limited), Some(Duration::from_secs(3)));
}

#[tokio::test(start_paused = true)]
async fn with_retry_waits_then_succeeds() {
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    let out = with_retry(&policy(), || async {
        match calls.fetch_add(1, Ordering::SeqCst) {
            0 => Err(AdapterError::RateLimited {
                retry_after: Duration::from_secs(2),
            }),
            1 => Err(transient()),
            _ => Ok("sent"),
        }
    })
    .await;
    assert_eq!(out, Ok("sent"));
    // 2 s Retry-After, then the second failure's backoff (1 s).
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn with_retry_gives_up_on_a_refusal_at_once() {
    let calls = AtomicU32::new(0);
    let out: Result<(), _> = with_retry(&policy(), || async {
        calls.fetch_add(1, Ordering::SeqCst);
        Err(AdapterError::Rejected("channel_not_found".into()))
    })
    .await;
    assert_eq!(out, Err(AdapterError::Rejected("channel_not_found".into())));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
