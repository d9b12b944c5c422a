//! Retries with backoff on 429 and 5xx, honouring `Retry-After`.
//!
//! Invariant: a rate-limited call is never retried sooner than the platform asked, and a refused
//! call ([`AdapterError::Rejected`]) is never retried at all: resending a payload the platform
//! refused cannot succeed and only spends the rate budget other cards need.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use tracing::debug;

use crate::AdapterError;

/// How often and how patiently a failed platform call is retried.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Most attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// Wait after the first transient failure; doubled after each further one.
    pub base_backoff: Duration,
    /// Cap on a backoff wait.
    pub max_backoff: Duration,
    /// Cap on how long a `Retry-After` is waited; a longer one ends the retries.
    pub max_retry_after: Duration,
    /// Spread backoff waits over [½·wait, wait] so failing cards do not retry in lockstep.
    /// `Retry-After` waits are never shortened.
    pub jitter: bool,
}

impl Default for RetryPolicy {
    /// Eight attempts over about a minute and a half of backoff (0.5, 1, 2, 4, 8, 16, 30 s).
    fn default() -> Self {
        Self {
            max_attempts: 8,
            base_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// The wait before the next attempt, after `failures` failures of which `error` is the last;
    /// `None` when the call should not be retried.
    pub fn delay(&self, failures: u32, error: &AdapterError) -> Option<Duration> {
        if failures >= self.max_attempts.max(1) {
            return None;
        }
        match error {
            AdapterError::RateLimited { retry_after } => {
                (*retry_after <= self.max_retry_after).then_some(*retry_after)
            }
            AdapterError::Transient(_) => Some(self.backoff(failures)),
            AdapterError::Rejected(_) => None,
        }
    }

    fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(20);
        let wait = self
            .base_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff);
        if self.jitter {
            let half = wait / 2;
            half + half.mul_f64(unit_random())
        } else {
            wait
        }
    }
}

/// A number in [0, 1) from the process's random hash keys; no dependency for a little jitter.
fn unit_random() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u8(0);
    #[allow(clippy::cast_precision_loss)]
    let r = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
    r
}

/// Runs `call` until it succeeds or `policy` gives up; returns the last error then.
pub async fn with_retry<T, F, Fut>(policy: &RetryPolicy, mut call: F) -> Result<T, AdapterError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, AdapterError>>,
{
    let mut failures = 0;
    loop {
        match call().await {
            Ok(value) => return Ok(value),
            Err(error) => {
                failures += 1;
                let Some(wait) = policy.delay(failures, &error) else {
                    return Err(error);
                };
                debug!(failures, ?wait, %error, "Platform call failed; retrying.");
                tokio::time::sleep(wait).await;
            }
        }
    }
}
