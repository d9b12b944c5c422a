//! Relaying other replicas' live events to this replica's subscribers.
//!
//! Invariants: while anyone here subscribes to a session and the coordinator is shared, exactly
//! one task relays the events other replicas publish for it; the relay is subscribed before
//! [`SessionHub::subscribe`] returns, so a subscriber that then replays the store misses nothing
//! published after; the relay holds the runtime weakly and ends within [`CHECK_EVERY`] of its
//! last subscriber leaving, so an idle session costs nothing here.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use workmate_protocol::{SessionId, TenantId};

use super::SessionHub;
use crate::runtime::SessionRuntime;

/// How often a relay checks that someone still subscribes.
const CHECK_EVERY: Duration = Duration::from_secs(5);

impl SessionHub {
    /// Where a new runtime's events go for other replicas: the coordinator, when it is shared.
    pub(super) fn fanout(&self) -> Option<Arc<dyn workmate_coordinator::Coordinator>> {
        let coordinator = &self.inner.deps.coordinator;
        coordinator.is_shared().then(|| Arc::clone(coordinator))
    }

    /// Starts relaying other replicas' events of the session to `runtime`'s subscribers, unless
    /// a relay runs already or nothing is shared.
    pub(super) async fn relay_other_replicas(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: &Arc<SessionRuntime>,
    ) {
        let coordinator = Arc::clone(&self.inner.deps.coordinator);
        if !coordinator.is_shared() || !runtime.start_relay() {
            return;
        }
        let mut events = match coordinator.subscribe_events(tenant, session).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(tenant = %tenant, session = %session, error = %e, "Cannot follow other replicas' events of the session; its subscribers here see only this replica's.");
                runtime.stop_relay();
                return;
            }
        };
        let runtime = Arc::downgrade(runtime);
        let stop = self.inner.shutdown.clone();
        tokio::spawn(async move {
            let mut check = tokio::time::interval(CHECK_EVERY);
            check.tick().await;
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = check.tick() => match runtime.upgrade() {
                        Some(runtime) if !runtime.stop_relay_if_unwatched() => {}
                        _ => return,
                    },
                    received = events.recv() => match received {
                        Ok(event) => match runtime.upgrade() {
                            Some(runtime) => runtime.relay(event),
                            None => return,
                        },
                        // Subscribers that miss a state event replay it from the store.
                        Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => break,
                    },
                }
            }
            if let Some(runtime) = runtime.upgrade() {
                runtime.stop_relay();
            }
        });
    }
}
