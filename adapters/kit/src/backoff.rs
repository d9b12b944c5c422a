//! The waits between a long connection's attempts, for every platform's client.
//!
//! Invariants: failed attempts in a row wait `first`, then twice as long each time up to `max`;
//! every wait is jittered down by up to a quarter, so a fleet that lost its platform at the same
//! instant does not come back at the same instant; a connection that worked resets the count.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::time::Duration;

/// Exponential backoff with jitter.
#[derive(Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    /// Failed attempts in a row.
    failures: u32,
}

impl Backoff {
    /// Waits from `first`, doubling up to `max`.
    pub fn new(first: Duration, max: Duration) -> Self {
        Self {
            first,
            max,
            failures: 0,
        }
    }

    /// A connection worked: the next failure waits `first` again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }

    /// An attempt failed (or a connection was lost): the wait before the next one.
    pub fn failed(&mut self) -> Duration {
        let doublings = self.failures.min(31);
        self.failures = self.failures.saturating_add(1);
        let wait = self.first.saturating_mul(1 << doublings).min(self.max);
        jitter(wait)
    }
}

impl Backoff {
    /// The wait after a long connection `ended`: none when the platform asked for a new
    /// connection, the next backoff otherwise, starting over after a connection that worked.
    pub fn after<E>(&mut self, ended: &crate::ws::Ended<E>) -> Duration {
        if ended.was_healthy() {
            self.reset();
        }
        match ended {
            crate::ws::Ended::Moved { .. } => Duration::ZERO,
            _ => self.failed(),
        }
    }
}

/// `wait`, shortened by a random part of at most a quarter of it.
pub fn jitter(wait: Duration) -> Duration {
    wait.saturating_sub(random_below(wait / 4))
}

/// A random duration in `[0, max)`; zero when `max` is zero.
pub fn random_below(max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(random_u64() % nanos)
}

/// A random number: enough to spread reconnections and make request ids unique, not for
/// secrets.
pub fn random_u64() -> u64 {
    // Every RandomState has fresh keys.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn within(wait: Duration, full: Duration) -> bool {
        wait <= full && wait >= full - full / 4
    }

    #[test]
    fn waits_double_from_one_second_to_sixty_then_reset() {
        let mut backoff = Backoff::new(S, 60 * S);
        for full in [1, 2, 4, 8, 16, 32, 60, 60].map(|n| n * S) {
            let wait = backoff.failed();
            assert!(within(wait, full), "{wait:?} for {full:?}");
        }
        backoff.reset();
        let wait = backoff.failed();
        assert!(within(wait, S), "{wait:?}");
    }

    #[test]
    fn many_failures_stay_at_the_cap() {
        let mut backoff = Backoff::new(S, 60 * S);
        for _ in 0..100 {
            backoff.failed();
        }
        assert!(within(backoff.failed(), 60 * S));
    }

    #[test]
    fn a_move_comes_at_once_and_a_healthy_loss_starts_over() {
        use crate::ws::Ended;
        let mut backoff = Backoff::new(S, 60 * S);
        let failed = Ended::Failed(());
        assert!(within(backoff.after(&failed), S));
        assert!(within(backoff.after(&failed), 2 * S));
        let moved = Ended::<()>::Moved { healthy: true };
        assert_eq!(backoff.after(&moved), Duration::ZERO);
        let lost = Ended::Lost {
            error: (),
            healthy: true,
        };
        assert!(
            within(backoff.after(&lost), S),
            "a connection that worked resets"
        );
        let dead = Ended::Lost {
            error: (),
            healthy: false,
        };
        assert!(within(backoff.after(&dead), 2 * S));
    }

    #[test]
    fn jitter_varies_and_stays_within_a_quarter() {
        let waits: Vec<_> = (0..100).map(|_| jitter(400 * S)).collect();
        assert!(waits.iter().all(|w| within(*w, 400 * S)));
        assert!(waits.iter().any(|w| *w != waits[0]), "the waits vary");
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }
}
