//! Prompts that waited long (the tenant setting `approvals`, see [`crate::approval_timing`]),
//! looked at on every tick: one past its expiry is dismissed as expired
//! ([`crate::SessionHub::expire_prompt`]); one past its reminder time is announced again, once
//! ([`crate::RunObserver::prompt_still_waits`], audited `approval_reminded`).
//!
//! Invariants: every replica ticks, so a reminder is claimed first (a one-time id per prompt in
//! the spent-links table) and an expiry is a conditional resolve: each happens once however
//! many replicas look; a tenant without the setting is never touched.

use std::collections::HashMap;
use std::sync::Arc;

use tracing::{info, warn};
use workmate_protocol::TenantId;
use workmate_store::NewAuditRecord;

use super::{Inner, TickReport};
use crate::Result;
use crate::approval_timing::ApprovalTiming;

/// Prompts younger than this are not looked at.
const YOUNGEST_MS: i64 = 60_000;
/// Waiting prompts read per tick at most.
const READ: u32 = 1_000;

impl Inner {
    /// Reminds of, and expires, the prompts that waited long (see the module docs).
    pub(super) async fn sweep_prompts(
        inner: &Arc<Self>,
        now: i64,
        report: &mut TickReport,
    ) -> Result<()> {
        let store = inner.hub.store();
        let waiting = store
            .inbox()
            .waiting_since_before(now - YOUNGEST_MS, READ)
            .await?;
        let mut timings: HashMap<TenantId, ApprovalTiming> = HashMap::new();
        for item in waiting {
            report.rows += 1;
            let timing = match timings.get(&item.tenant_id) {
                Some(timing) => *timing,
                None => {
                    let settings = store.tenants().settings(&item.tenant_id).await?;
                    let timing = ApprovalTiming::of(&settings);
                    timings.insert(item.tenant_id.clone(), timing);
                    timing
                }
            };
            let waited = now - item.created_at_ms;
            if timing.expire_after_ms.is_some_and(|after| waited >= after) {
                if inner.hub.expire_prompt(&item, waited).await? {
                    info!(tenant = %item.tenant_id, item = %item.id, "A prompt expired unanswered.");
                    report.expired += 1;
                }
                continue;
            }
            if timing.remind_after_ms.is_none_or(|after| waited < after) {
                continue;
            }
            let once = format!("remind:{}", item.id);
            if !store
                .spent_links()
                .spend(&item.tenant_id, &once, "reminder")
                .await?
            {
                continue;
            }
            let audit = NewAuditRecord {
                session_id: Some(item.session_id.clone()),
                actor: Some("system".into()),
                stage: "approval_reminded".into(),
                tool: item
                    .data
                    .get("tool")
                    .and_then(|t| t.as_str())
                    .map(str::to_owned),
                status: Some("reminded".into()),
                detail: serde_json::json!({ "item_id": item.id, "waited_ms": waited }),
            };
            if let Err(e) = store.audit().append(&item.tenant_id, &audit).await {
                warn!(error = %e, "Cannot audit a reminder.");
            }
            inner.observer.prompt_still_waits(&item).await;
            report.reminded += 1;
        }
        Ok(())
    }
}
