//! Tenant users by platform identity, cached: every chat delivery resolves its sender, whose
//! binding never changes once made and whose user row changes rarely.
//!
//! Invariants: a change to a user made through this process's store is seen by its next read
//! (every user write drops the whole cache after it commits, and a row read while a write ran
//! is not cached); a change made by another process is seen within [`IDENTITY_TTL`]; only found
//! users are cached (a platform user seen for the first time is bound at once, and must then be
//! read again); the cache holds at most [`MAX_IDENTITIES`] entries.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::sync::Cache;
use workmate_protocol::TenantId;

use crate::repo::tenants::User;

/// How long a cached user is trusted without reading it again (the same bound as tenant rows).
const IDENTITY_TTL: Duration = Duration::from_secs(5);
/// Platform identities kept at most.
const MAX_IDENTITIES: u64 = 50_000;

/// Which platform account: its tenant, its platform and its id there.
type Key = (TenantId, String, String);

/// Users by the platform account bound to them.
#[derive(Clone, Debug)]
pub(crate) struct IdentityCache {
    users: Cache<Key, User>,
    /// Bumped by every user write: a row read before a write is not cached after it.
    writes: Arc<AtomicU64>,
}

impl Default for IdentityCache {
    fn default() -> Self {
        Self {
            users: Cache::builder()
                .max_capacity(MAX_IDENTITIES)
                .time_to_live(IDENTITY_TTL)
                .build(),
            writes: Arc::default(),
        }
    }
}

impl IdentityCache {
    /// Entries held.
    pub(crate) fn len(&self) -> u64 {
        self.users.entry_count()
    }

    pub(crate) fn get(&self, tenant: &TenantId, platform: &str, id: &str) -> Option<User> {
        self.users
            .get(&(tenant.clone(), platform.to_owned(), id.to_owned()))
    }

    /// A mark to take before reading from the database, for [`IdentityCache::put`].
    pub(crate) fn mark(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// Caches a user read after `mark` was taken, unless a user write came in between.
    pub(crate) fn put(&self, tenant: &TenantId, platform: &str, id: &str, user: User, mark: u64) {
        if self.mark() != mark {
            return;
        }
        let key = (tenant.clone(), platform.to_owned(), id.to_owned());
        self.users.insert(key.clone(), user);
        // A write that bumped the mark meanwhile may have cleared the cache before this insert.
        if self.mark() != mark {
            self.users.invalidate(&key);
        }
    }

    /// Drops every entry: called after every write to a user row. User writes are rare (a
    /// first sight, a role change, an SSO binding), so one rule for all of them is enough.
    pub(crate) fn forget_all(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.users.invalidate_all();
    }
}
