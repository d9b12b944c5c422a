//! A prompt that waited past its tenant's `approvals.expire_after_hours` is dismissed as expired:
//! its turn goes on as if it had been denied, its cards say so, and the dismissal is audited
//! (`approval_expired`). The first answer still wins: a prompt answered a moment before is left
//! as it is.

use workmate_protocol::{Actor, EventKind, Resolution, Surface};
use workmate_store::{InboxItem, NewAuditRecord, ResolveOutcome};

use super::SessionHub;
use crate::Result;

/// Who dismisses expired prompts.
const SYSTEM: &str = "system";

impl SessionHub {
    /// Dismisses `item` as expired after waiting `waited_ms`; `false` when someone answered it
    /// first.
    pub async fn expire_prompt(&self, item: &InboxItem, waited_ms: i64) -> Result<bool> {
        let tenant = &item.tenant_id;
        let hours = waited_ms / 3_600_000;
        let resolution = Resolution::Dismissed {
            reason: format!("expired: nobody answered within {hours} h"),
        };
        let by = Actor::named(SYSTEM, "workmate");
        let outcome = self
            .store()
            .inbox()
            .resolve(tenant, &item.id, &resolution, &by.user_id, Surface::System)
            .await?;
        let ResolveOutcome::Resolved(resolved) = outcome else {
            return Ok(false);
        };
        let audit = NewAuditRecord {
            session_id: Some(item.session_id.clone()),
            actor: Some(SYSTEM.to_owned()),
            stage: "approval_expired".into(),
            tool: item
                .data
                .get("tool")
                .and_then(|t| t.as_str())
                .map(str::to_owned),
            status: Some("expired".into()),
            detail: serde_json::json!({ "item_id": item.id, "waited_ms": waited_ms }),
        };
        self.store().audit().append(tenant, &audit).await?;
        let event = EventKind::InboxItemResolved {
            item_id: resolved.id.clone(),
            item_kind: resolved.kind,
            tool_call_id: resolved.tool_call_id.clone(),
            resolution,
            resolved_by: by,
            via: Surface::System,
        };
        self.announce_resolution(tenant, &resolved, event).await?;
        Ok(true)
    }
}
