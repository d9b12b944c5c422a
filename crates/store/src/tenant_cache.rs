//! Tenant rows, cached: every turn reads its tenant's settings, which change rarely.
//!
//! Invariants: a change made through this process's store is seen by its next read (the write
//! drops the entry after it commits); a change made by another process is seen within
//! [`TENANT_TTL`]; the cache holds at most [`MAX_TENANTS`] tenants.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::sync::Cache;
use workmate_protocol::TenantId;

use crate::repo::tenants::Tenant;

/// How long a cached tenant row is trusted without reading it again.
const TENANT_TTL: Duration = Duration::from_secs(5);
/// Tenants kept at most.
const MAX_TENANTS: u64 = 10_000;

/// Tenant rows by id; `None` caches that a tenant does not exist (yet).
#[derive(Clone, Debug)]
pub(crate) struct TenantCache {
    rows: Cache<TenantId, Option<Tenant>>,
    /// Bumped by every write: a row read before a write is not cached after it.
    writes: Arc<AtomicU64>,
}

impl Default for TenantCache {
    fn default() -> Self {
        Self {
            rows: Cache::builder()
                .max_capacity(MAX_TENANTS)
                .time_to_live(TENANT_TTL)
                .build(),
            writes: Arc::default(),
        }
    }
}

impl TenantCache {
    /// Entries held.
    pub(crate) fn len(&self) -> u64 {
        self.rows.entry_count()
    }

    pub(crate) fn get(&self, tenant: &TenantId) -> Option<Option<Tenant>> {
        self.rows.get(tenant)
    }

    /// A mark to take before reading a row from the database, for [`TenantCache::put`].
    pub(crate) fn mark(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// Caches a row read after `mark` was taken, unless a write came in between.
    pub(crate) fn put(&self, tenant: &TenantId, row: Option<Tenant>, mark: u64) {
        if self.mark() == mark {
            self.rows.insert(tenant.clone(), row);
        }
    }

    /// Drops the tenant's entry: called after every write to its row.
    pub(crate) fn forget(&self, tenant: &TenantId) {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.rows.invalidate(tenant);
    }
}
