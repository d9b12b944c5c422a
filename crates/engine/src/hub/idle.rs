//! Dropping the live state of idle sessions.
//!
//! Invariants: a session's runtime is dropped only when nothing uses it (no turn, no subscriber,
//! nothing queued for the store, no other holder: checked under the map's lock, where every
//! holder got its copy) and nobody asked for it for [`crate::EngineConfig::idle_session`]; what
//! it held is in the store, so the next use loads it again. An idle session costs nothing here.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::SessionHub;

impl SessionHub {
    /// Drops the runtimes of sessions unused for the configured idle time; how many.
    pub fn evict_idle(&self) -> usize {
        self.evict_idle_for(self.inner.deps.config.idle_session)
    }

    /// Drops the runtimes of sessions unused for `idle`; how many.
    pub fn evict_idle_for(&self, idle: Duration) -> usize {
        let idle_ms = i64::try_from(idle.as_millis()).unwrap_or(i64::MAX);
        let now = self.inner.deps.clock.now_ms();
        let mut sessions = self.lock_sessions();
        let before = sessions.len();
        sessions.retain(|_, runtime| {
            let unused = Arc::strong_count(runtime) == 1
                && runtime.subscribers() == 0
                && !runtime.is_running()
                && runtime.is_flushed();
            !(unused && now.saturating_sub(runtime.last_used_ms()) >= idle_ms)
        });
        before - sessions.len()
    }

    /// Sessions with live state in this process.
    pub fn live_sessions(&self) -> usize {
        self.lock_sessions().len()
    }

    /// Sessions whose history stays in memory between turns (at most
    /// [`crate::EngineConfig::hot_histories`]).
    pub fn hot_histories(&self) -> u64 {
        self.inner.hot.len()
    }

    /// Drops idle sessions' runtimes every quarter of the idle time (at least every second,
    /// at most every minute) until `stop`.
    pub fn evict_idle_continuously(&self, stop: CancellationToken) {
        let every = (self.inner.deps.config.idle_session / 4)
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        let hub = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                let dropped = hub.evict_idle();
                if dropped > 0 {
                    tracing::debug!(
                        dropped,
                        live = hub.live_sessions(),
                        "Dropped idle sessions' live state."
                    );
                }
            }
        });
    }
}
