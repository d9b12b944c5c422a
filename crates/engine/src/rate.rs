//! Model calls per tenant per minute, counted in this process.
//!
//! Invariants: at most `limit` calls start in any 60-second window per tenant; a caller over the
//! limit is told how long until a slot frees, never refused outright; no lock is held across an
//! await (the caller sleeps outside).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use workmate_protocol::TenantId;

const WINDOW_MS: i64 = 60_000;

/// Start times of recent model calls, per tenant.
#[derive(Debug, Default)]
pub(crate) struct RateLimiter {
    starts: Mutex<HashMap<TenantId, VecDeque<i64>>>,
}

impl RateLimiter {
    /// Records a call starting at `now` if the tenant is under `limit`; otherwise how long until
    /// one may start.
    pub(crate) fn try_start(&self, tenant: &TenantId, limit: u32, now: i64) -> Option<Duration> {
        let mut starts = self.starts.lock().unwrap_or_else(|e| e.into_inner());
        let recent = starts.entry(tenant.clone()).or_default();
        while recent.front().is_some_and(|t| *t <= now - WINDOW_MS) {
            recent.pop_front();
        }
        if recent.len() < limit.max(1) as usize {
            recent.push_back(now);
            return None;
        }
        let oldest = recent.front().copied().unwrap_or(now);
        let wait = (oldest + WINDOW_MS - now).max(1);
        Some(Duration::from_millis(u64::try_from(wait).unwrap_or(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_at_most_the_limit() {
        let limiter = RateLimiter::default();
        let tenant = TenantId::from("t");
        assert_eq!(limiter.try_start(&tenant, 2, 0), None);
        assert_eq!(limiter.try_start(&tenant, 2, 10), None);
        assert_eq!(
            limiter.try_start(&tenant, 2, 20),
            Some(Duration::from_millis(59_980))
        );
        assert_eq!(
            limiter.try_start(&TenantId::from("other"), 2, 20),
            None,
            "per tenant"
        );
        assert_eq!(
            limiter.try_start(&tenant, 2, 60_000),
            None,
            "the first call left the window"
        );
    }
}
