//! [`SharedValues`] as the deployment has them: in the coordinator when replicas share one
//! (Redis), else in the database, which every replica reaches.
//!
//! Invariant: a failure to keep or read a value is logged and reads as nothing.

use std::sync::Arc;
use std::time::Duration;

use tracing::warn;
use workmate_adapter::{BoxFuture, SharedValues};
use workmate_engine::Coordinator;
use workmate_store::Store;

/// The deployment's shared values.
#[derive(Clone, Debug)]
pub(crate) struct ReplicaValues {
    pub(crate) coordinator: Arc<dyn Coordinator>,
    pub(crate) store: Store,
}

impl SharedValues for ReplicaValues {
    fn put<'a>(&'a self, key: &'a str, value: String, ttl: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.coordinator.is_shared() {
                return self.coordinator.put_value(key, &value, ttl).await;
            }
            let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
            if let Err(e) = self.store.shared_values().put(key, &value, ttl_ms).await {
                warn!(error = %e, "Cannot keep a value for the other replicas.");
            }
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            if self.coordinator.is_shared() {
                return self.coordinator.value(key).await;
            }
            self.store
                .shared_values()
                .get(key)
                .await
                .inspect_err(|e| warn!(error = %e, "Cannot read a value another replica kept."))
                .ok()
                .flatten()
        })
    }
}
