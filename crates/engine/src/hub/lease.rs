//! Taking and keeping sessions' writer leases.
//!
//! Invariants: this process writes to a session only under a lease it holds (every path that
//! writes takes it first, through [`SessionHub::emitter`] or before a turn starts); a running
//! turn's lease is renewed while it runs (parked turns included), so only a process that stopped
//! loses it; a lease another process holds is never taken before it expires.

use std::sync::Arc;

use tokio_util::sync::{CancellationToken, DropGuard};
use workmate_protocol::{SessionId, TenantId};

use super::SessionHub;
use crate::runtime::SessionRuntime;
use crate::{Error, Result};

impl SessionHub {
    /// When a lease taken now expires.
    pub(super) fn lease_until(&self) -> i64 {
        let ttl = i64::try_from(self.inner.deps.config.lease_ttl.as_millis()).unwrap_or(i64::MAX);
        self.inner.deps.clock.now_ms().saturating_add(ttl)
    }

    /// Makes sure this process holds the session's lease; renews it once half its time is
    /// gone. `DrivenElsewhere` while another process holds it.
    pub(super) async fn hold_lease(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: &SessionRuntime,
    ) -> Result<u64> {
        let ttl = i64::try_from(self.inner.deps.config.lease_ttl.as_millis()).unwrap_or(i64::MAX);
        let now = self.inner.deps.clock.now_ms();
        if let Some((token, until)) = runtime.lease(now)
            && until - now > ttl / 2
        {
            return Ok(token);
        }
        let until = now.saturating_add(ttl);
        let taken = self
            .store()
            .leases()
            .take_counted(tenant, session, &self.inner.replica, until)
            .await?;
        let Some((token, stored)) = taken else {
            return Err(Error::DrivenElsewhere(session.clone()));
        };
        // Another replica wrote to the session since this copy was read (it drove the session
        // while this one only watched): read it again, or every write would be refused.
        if runtime.is_behind(stored) && runtime.is_flushed() && !runtime.is_running() {
            let record = self.load(tenant, session).await?;
            runtime.refresh(record);
        }
        runtime.set_lease(token, until);
        Ok(token)
    }

    /// Renews the session's lease while the returned guard lives.
    pub(super) fn keep_lease(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        runtime: &Arc<SessionRuntime>,
    ) -> DropGuard {
        let stop = CancellationToken::new();
        let (hub, tenant, session) = (self.clone(), tenant.clone(), session.clone());
        let runtime = Arc::clone(runtime);
        let every = self.inner.deps.config.lease_ttl / 3;
        let done = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = done.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                if let Err(e) = hub.hold_lease(&tenant, &session, &runtime).await {
                    tracing::warn!(tenant = %tenant, session = %session, error = %e, "Cannot renew the session's lease.");
                }
            }
        });
        stop.drop_guard()
    }
}
