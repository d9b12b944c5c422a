//! The in-process coordinator: one replica, or replicas that share only the database.
//!
//! Invariants: events need no fan-out (a replica's subscribers get its own events directly);
//! limits are counted in this process; no delivery is remembered (the intake table decides);
//! signals reach this process's own listeners; kept values are this process's, dropped when they
//! expire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;
use workmate_protocol::{Event, SessionId, TenantId};

use crate::sliding::SlidingWindows;
use crate::{BoxFuture, Coordinator, EventReceiver, Result, Signal, Stats};

/// Signals buffered for a listener that falls behind.
pub(crate) const SIGNAL_BUFFER: usize = 256;

/// The embedded default.
#[derive(Debug)]
pub struct InProcess {
    windows: SlidingWindows,
    signals: broadcast::Sender<Signal>,
    /// Kept values and when each expires.
    values: Mutex<HashMap<String, (String, Instant)>>,
}

impl Default for InProcess {
    fn default() -> Self {
        Self {
            windows: SlidingWindows::default(),
            signals: broadcast::channel(SIGNAL_BUFFER).0,
            values: Mutex::default(),
        }
    }
}

impl InProcess {
    /// An in-process coordinator behind the trait.
    pub fn shared() -> Arc<dyn Coordinator> {
        Arc::new(Self::default())
    }
}

impl Coordinator for InProcess {
    fn is_shared(&self) -> bool {
        false
    }

    fn publish_event(&self, _event: &Arc<Event>) {}

    fn subscribe_events<'a>(
        &'a self,
        _tenant: &'a TenantId,
        _session: &'a SessionId,
    ) -> BoxFuture<'a, Result<EventReceiver>> {
        // A receiver whose sender is gone at once: it yields `Closed`, never an event.
        Box::pin(async { Ok(broadcast::channel(1).1) })
    }

    fn try_acquire<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        now_ms: i64,
    ) -> BoxFuture<'a, Option<Duration>> {
        Box::pin(async move { self.windows.try_start(key, limit, now_ms) })
    }

    fn seen<'a>(&'a self, _key: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async { false })
    }

    fn remember<'a>(&'a self, _key: &'a str, _ttl: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    fn put_value<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> BoxFuture<'a, ()> {
        let now = Instant::now();
        let mut values = self.values.lock().unwrap_or_else(PoisonError::into_inner);
        values.retain(|_, (_, until)| *until > now);
        values.insert(key.to_owned(), (value.to_owned(), now + ttl));
        Box::pin(async {})
    }

    fn value<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>> {
        let now = Instant::now();
        let found = self
            .values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .filter(|(_, until)| *until > now)
            .map(|(value, _)| value.clone());
        Box::pin(async move { found })
    }

    fn signal(&self, signal: Signal) {
        // Nobody listening is fine: a signal only makes something happen sooner.
        let _ = self.signals.send(signal);
    }

    fn signals(&self) -> broadcast::Receiver<Signal> {
        self.signals.subscribe()
    }

    fn flush(&self, _within: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_kept_value_is_read_until_it_expires() {
        let local = InProcess::default();
        local.put_value("k", "one", Duration::from_secs(60)).await;
        local.put_value("k", "two", Duration::from_secs(60)).await;
        local.put_value("gone", "x", Duration::ZERO).await;
        assert_eq!(local.value("k").await.as_deref(), Some("two"));
        assert_eq!(local.value("gone").await, None);
        assert_eq!(local.value("never").await, None);
    }
}
