//! Waiting for something: poll a probe until it yields, or fail once `within` has passed, naming
//! `what` was awaited and the time waited. The deadline is on tokio's clock, so a test with paused
//! time waits without sleeping.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

/// How long the async helpers wait between two probes.
pub const POLL_EVERY: Duration = Duration::from_millis(20);

/// How long [`eventually_blocking`] waits between two probes (its probes are requests to other
/// processes).
const POLL_BLOCKING_EVERY: Duration = Duration::from_millis(50);

/// Polls `probe` until it returns `Some`, and returns what it found.
///
/// # Panics
/// When `within` passes with `probe` still returning `None`.
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = tokio::time::Instant::now();
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        let waited = started.elapsed();
        if waited >= within {
            fail(what, waited, None);
        }
        tokio::time::sleep(POLL_EVERY.min(within - waited)).await;
    }
}

/// Polls `check` until it holds.
///
/// # Panics
/// When `within` passes with `check` still false.
pub async fn eventually_holds<F, Fut>(what: &str, within: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually(what, within, || {
        let checked = check();
        async move { checked.await.then_some(()) }
    })
    .await;
}

/// Polls `probe` until it returns `Ok`; the failure shows the last `Err`, which is where a test
/// puts what it saw instead ("the calls so far", "the last status").
///
/// # Panics
/// When `within` passes with `probe` still returning `Err`.
pub async fn eventually_ok<T, E, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    E: Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let started = tokio::time::Instant::now();
    loop {
        let last = match probe().await {
            Ok(found) => return found,
            Err(last) => last,
        };
        let waited = started.elapsed();
        if waited >= within {
            fail(what, waited, Some(&last));
        }
        tokio::time::sleep(POLL_EVERY.min(within - waited)).await;
    }
}

/// [`eventually`] for a test without a runtime (one that drives other processes): polls `probe`
/// on this thread until it returns `Some`.
///
/// # Panics
/// When `within` passes with `probe` still returning `None`.
pub fn eventually_blocking<T>(
    what: &str,
    within: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let started = std::time::Instant::now();
    loop {
        if let Some(found) = probe() {
            return found;
        }
        let waited = started.elapsed();
        if waited >= within {
            fail(what, waited, None);
        }
        std::thread::sleep(POLL_BLOCKING_EVERY.min(within - waited));
    }
}

#[allow(clippy::panic, reason = "failing the test is this helper's job")]
fn fail(what: &str, waited: Duration, last: Option<&dyn Debug>) -> ! {
    match last {
        None => panic!("{what}: not reached within {waited:?}"),
        Some(last) => panic!("{what}: not reached within {waited:?}; last seen: {last:#?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn returns_what_the_probe_finds_once_it_finds_it() {
        let probes = AtomicUsize::new(0);
        let found = eventually("the third probe", Duration::from_secs(1), || async {
            let n = probes.fetch_add(1, Ordering::SeqCst) + 1;
            (n == 3).then_some(n)
        })
        .await;
        assert_eq!(found, 3);
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "the answer: not reached within 1s")]
    async fn fails_naming_what_was_awaited_and_for_how_long() {
        eventually_holds("the answer", Duration::from_secs(1), || async { false }).await;
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "last seen: \"two calls\"")]
    async fn a_failure_shows_the_last_thing_seen() {
        eventually_ok("three calls", Duration::from_secs(1), || async {
            Err::<(), _>("two calls")
        })
        .await;
    }

    #[test]
    fn the_blocking_twin_waits_on_this_thread() {
        let mut probes = 0;
        let found = eventually_blocking("the second probe", Duration::from_secs(5), || {
            probes += 1;
            (probes == 2).then_some("found")
        });
        assert_eq!(found, "found");
    }

    #[test]
    #[should_panic(expected = "the server: not reached within")]
    fn the_blocking_twin_fails_after_its_deadline() {
        eventually_blocking("the server", Duration::from_millis(60), || None::<()>);
    }
}
