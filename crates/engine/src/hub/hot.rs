//! The sessions whose history stays in memory between turns.
//!
//! Invariant: at most `hot_histories` runtimes keep a history; when a session joins the set
//! beyond that, the least recently used one drops its copy (its next turn reads the store).

use std::sync::{Arc, Weak};

use moka::notification::RemovalCause;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;
use workmate_protocol::{SessionId, TenantId};

use crate::runtime::SessionRuntime;

/// Runtimes holding a cached history, least recently used evicted first.
#[derive(Clone)]
pub(super) struct HotHistories {
    runtimes: Cache<(TenantId, SessionId), Weak<SessionRuntime>>,
}

impl std::fmt::Debug for HotHistories {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotHistories")
            .field("entries", &self.runtimes.entry_count())
            .finish()
    }
}

impl HotHistories {
    pub(super) fn new(capacity: u64) -> Self {
        let runtimes = Cache::builder()
            .max_capacity(capacity)
            // Plain LRU: every kept history is admitted, and the oldest one leaves.
            .eviction_policy(EvictionPolicy::lru())
            .eviction_listener(|_key, runtime: Weak<SessionRuntime>, cause| {
                if cause == RemovalCause::Size
                    && let Some(runtime) = runtime.upgrade()
                {
                    runtime.forget_history();
                }
            })
            .build();
        Self { runtimes }
    }

    /// Sessions in the set.
    pub(super) fn len(&self) -> u64 {
        self.runtimes.entry_count()
    }

    /// Keeps `history` in the session's runtime, as its most recently used.
    pub(super) fn keep(
        &self,
        (tenant, session): (&TenantId, &SessionId),
        runtime: &Arc<SessionRuntime>,
        history: Vec<workmate_protocol::Message>,
    ) {
        runtime.keep_history(history);
        self.runtimes
            .insert((tenant.clone(), session.clone()), Arc::downgrade(runtime));
    }
}
