//! The waits between connection attempts, by the server's [`ClientConfig`].
//!
//! Invariants: after a connection that worked is lost, the next attempt waits a random part of
//! `ReconnectNonce` (so a whole fleet does not come back at the same instant); after a failed
//! attempt, the first retry waits that too and later ones wait `ReconnectInterval`, jittered
//! down by at most a quarter; with `ReconnectCount` ≥ 0, more failures in a row than that
//! give up.

use std::time::Duration;

use workmate_adapter::backoff::random_below;

use super::endpoint::ClientConfig;

/// Where a client is in its reconnection attempts.
#[derive(Debug)]
pub(crate) struct Backoff {
    /// Failed attempts in a row.
    failures: u64,
    /// The next failure waits the nonce rather than the interval.
    nonce_due: bool,
    /// How long one config second lasts.
    second: Duration,
}

impl Backoff {
    pub(crate) fn new(second: Duration) -> Self {
        Self {
            failures: 0,
            nonce_due: true,
            second,
        }
    }

    /// Failed attempts in a row so far.
    pub(crate) fn failures(&self) -> u64 {
        self.failures
    }

    /// A connection that worked was lost: the wait before the next attempt.
    pub(crate) fn dropped(&mut self, config: &ClientConfig) -> Duration {
        self.failures = 0;
        self.nonce_due = false;
        random_below(self.seconds(config.reconnect_nonce))
    }

    /// An attempt failed: the wait before the next one, or `None` to give up.
    pub(crate) fn failed(&mut self, config: &ClientConfig) -> Option<Duration> {
        self.failures = self.failures.saturating_add(1);
        if u64::try_from(config.reconnect_count).is_ok_and(|max| self.failures > max) {
            return None;
        }
        if std::mem::take(&mut self.nonce_due) {
            return Some(random_below(self.seconds(config.reconnect_nonce)));
        }
        let interval = self.seconds(config.reconnect_interval);
        Some(interval.saturating_sub(random_below(interval / 4)))
    }

    fn seconds(&self, n: u64) -> Duration {
        self.second
            .saturating_mul(u32::try_from(n).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn config(count: i64) -> ClientConfig {
        ClientConfig {
            reconnect_count: count,
            reconnect_interval: 100,
            reconnect_nonce: 30,
            ping_interval: 120,
        }
    }

    #[test]
    fn the_nonce_comes_first_then_the_jittered_interval() {
        let mut backoff = Backoff::new(MS);
        let config = config(-1);
        let first = backoff.failed(&config).unwrap();
        assert!(first < 30 * MS, "{first:?}");
        for _ in 0..50 {
            let wait = backoff.failed(&config).unwrap();
            assert!((75 * MS..=100 * MS).contains(&wait), "{wait:?}");
        }
        assert_eq!(backoff.failures(), 51);
        let after_drop = backoff.dropped(&config);
        assert!(after_drop < 30 * MS, "{after_drop:?}");
        assert_eq!(backoff.failures(), 0);
        let retry = backoff.failed(&config).unwrap();
        assert!(
            retry >= 75 * MS,
            "after a drop the nonce was spent: {retry:?}"
        );
    }

    #[test]
    fn a_reconnect_count_gives_up_after_that_many_failures() {
        let mut backoff = Backoff::new(MS);
        let config = config(2);
        assert!(backoff.failed(&config).is_some());
        assert!(backoff.failed(&config).is_some());
        assert!(backoff.failed(&config).is_none());
        backoff.dropped(&config);
        assert!(
            backoff.failed(&config).is_some(),
            "a connection resets the count"
        );
    }
}
