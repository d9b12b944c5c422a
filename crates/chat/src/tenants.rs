//! Which tenant a platform installation is, and which tenants this process knows exist.
//!
//! Invariants: an installation's tenant is `<platform>-<installation>` (Slack team `T1` is tenant
//! `slack-T1`), whatever surface of that platform the delivery came through; the known set is
//! bounded, and forgetting a tenant only costs one more idempotent write.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use workmate_protocol::{Surface, TenantId};

/// The tenant of a platform installation.
pub fn tenant_of(surface: Surface, installation: &str) -> TenantId {
    TenantId::from(format!("{}-{installation}", surface.platform().as_str()))
}

/// Tenants remembered at most; past it the set starts over (a forgotten tenant costs one more
/// idempotent write).
const KNOWN_TENANTS: usize = 10_000;

/// The tenants this process has made sure exist.
#[derive(Debug, Default)]
pub(crate) struct KnownTenants(Mutex<HashSet<TenantId>>);

impl KnownTenants {
    pub(crate) fn contains(&self, tenant: &TenantId) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tenant)
    }

    pub(crate) fn insert(&self, tenant: TenantId) {
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if known.len() >= KNOWN_TENANTS {
            known.clear();
        }
        known.insert(tenant);
    }
}
