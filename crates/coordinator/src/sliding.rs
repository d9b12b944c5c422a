//! Uses per key in a sliding 60-second window, counted in this process.
//!
//! Invariants: at most `limit` uses start in any 60-second window per key; a caller over the
//! limit is told how long until a use frees, never refused outright; keys whose window emptied
//! are dropped, so memory is bounded by the keys used in the last minute.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// The window's length.
pub(crate) const WINDOW_MS: i64 = 60_000;

/// Start times of recent uses, per key.
#[derive(Debug, Default)]
pub(crate) struct SlidingWindows {
    starts: Mutex<HashMap<String, VecDeque<i64>>>,
}

impl SlidingWindows {
    /// Records a use of `key` at `now` if it is under `limit`; otherwise how long until one may
    /// start.
    pub(crate) fn try_start(&self, key: &str, limit: u32, now: i64) -> Option<Duration> {
        let mut starts = self.starts.lock().unwrap_or_else(|e| e.into_inner());
        if starts.len() > 1024 {
            starts.retain(|_, recent| recent.back().is_some_and(|t| *t > now - WINDOW_MS));
        }
        let recent = starts.entry(key.to_owned()).or_default();
        while recent.front().is_some_and(|t| *t <= now - WINDOW_MS) {
            recent.pop_front();
        }
        if recent.len() < limit.max(1) as usize {
            recent.push_back(now);
            return None;
        }
        let oldest = recent.front().copied().unwrap_or(now);
        Some(wait_ms(oldest + WINDOW_MS - now))
    }
}

/// A wait of `ms` milliseconds, at least one.
pub(crate) fn wait_ms(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms.max(1)).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_at_most_the_limit() {
        let windows = SlidingWindows::default();
        assert_eq!(windows.try_start("t", 2, 0), None);
        assert_eq!(windows.try_start("t", 2, 10), None);
        assert_eq!(
            windows.try_start("t", 2, 20),
            Some(Duration::from_millis(59_980))
        );
        assert_eq!(windows.try_start("other", 2, 20), None, "per key");
        assert_eq!(
            windows.try_start("t", 2, 60_000),
            None,
            "the first use left the window"
        );
    }
}
