//! Installed personas and visible skills, cached: every turn reads its session's persona and the
//! skills it can load, which change rarely.
//!
//! Invariants: a change made through this process's store is seen by its next read (every
//! persona or skill write drops the whole cache after it commits; such writes are rare); a
//! change made by another process is seen within [`CATALOG_TTL`]; a read that started before a
//! write is never cached after it; at most [`MAX_ENTRIES`] entries of each kind are held.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::sync::Cache;
use workmate_protocol::TenantId;

use crate::repo::personas::PersonaRecord;
use crate::repo::skills::SkillRecord;

/// How long a cached entry is trusted without reading it again.
const CATALOG_TTL: Duration = Duration::from_secs(5);
/// Entries of each kind kept at most.
const MAX_ENTRIES: u64 = 10_000;

/// Which skills: tenant, persona id, channel key.
pub(crate) type SkillsKey = (TenantId, String, String);

#[derive(Clone, Debug)]
pub(crate) struct CatalogCache {
    personas: Cache<(TenantId, String), Option<PersonaRecord>>,
    skills: Cache<SkillsKey, Arc<Vec<SkillRecord>>>,
    /// Bumped by every write: an entry read before a write is not cached after it.
    writes: Arc<AtomicU64>,
}

impl Default for CatalogCache {
    fn default() -> Self {
        Self {
            personas: Cache::builder()
                .max_capacity(MAX_ENTRIES)
                .time_to_live(CATALOG_TTL)
                .build(),
            skills: Cache::builder()
                .max_capacity(MAX_ENTRIES)
                .time_to_live(CATALOG_TTL)
                .build(),
            writes: Arc::default(),
        }
    }
}

impl CatalogCache {
    /// A mark to take before reading from the database, for the `put_*` calls.
    pub(crate) fn mark(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    pub(crate) fn persona(&self, tenant: &TenantId, id: &str) -> Option<Option<PersonaRecord>> {
        self.personas.get(&(tenant.clone(), id.to_owned()))
    }

    pub(crate) fn put_persona(
        &self,
        tenant: &TenantId,
        id: &str,
        row: Option<PersonaRecord>,
        mark: u64,
    ) {
        if self.mark() == mark {
            self.personas.insert((tenant.clone(), id.to_owned()), row);
        }
    }

    pub(crate) fn skills(&self, key: &SkillsKey) -> Option<Arc<Vec<SkillRecord>>> {
        self.skills.get(key)
    }

    pub(crate) fn put_skills(&self, key: SkillsKey, rows: Arc<Vec<SkillRecord>>, mark: u64) {
        if self.mark() == mark {
            self.skills.insert(key, rows);
        }
    }

    /// Drops everything: called after every persona or skill write.
    pub(crate) fn forget(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.personas.invalidate_all();
        self.skills.invalidate_all();
    }
}
