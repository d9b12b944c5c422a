//! Who may answer a parked prompt.
//!
//! Invariants, for every way of answering (API, card button, text reply): the session's owner,
//! the tenant's approvers and its admins may answer; anyone else is refused; under the tenant
//! setting `separation_of_duties`, nobody may approve a shell or external call they asked for
//! themselves (they may still deny it); a choice the prompt did not offer is refused. A refusal
//! changes nothing, says why, and is audited.

use workmate_protocol::{Actor, InboxItemKind, Resolution, Surface, TenantId};
use workmate_store::{InboxItem, NewAuditRecord, Role};

use super::SessionHub;
use crate::permissions::{PermissionConfig, PermissionEngine, RiskClass};
use crate::turn::engine_tool_metadata;
use crate::{Error, Result};

impl SessionHub {
    /// Refuses (and audits) an answer `actor` may not give to `item`.
    pub(super) async fn check_resolver(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        resolution: &Resolution,
        actor: &Actor,
        via: Surface,
    ) -> Result<()> {
        let Err(reason) = self.resolver_may(tenant, item, resolution, actor).await? else {
            return Ok(());
        };
        let record = NewAuditRecord {
            session_id: Some(item.session_id.clone()),
            actor: Some(actor.user_id.to_string()),
            stage: "approval_refused".into(),
            tool: item
                .data
                .get("tool")
                .and_then(|t| t.as_str())
                .map(str::to_owned),
            status: Some("refused".into()),
            detail: serde_json::json!({ "item_id": item.id, "via": via, "reason": reason }),
        };
        self.store().audit().append(tenant, &record).await?;
        Err(Error::Forbidden(reason))
    }

    async fn resolver_may(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        resolution: &Resolution,
        actor: &Actor,
    ) -> Result<Result<(), String>> {
        let session = self.load(tenant, &item.session_id).await?;
        let role = self
            .store()
            .tenants()
            .get_user(tenant, &actor.user_id)
            .await?
            .map(|u| u.role);
        let owner = session.owner == actor.user_id;
        if !owner && !matches!(role, Some(Role::Approver | Role::Admin)) {
            return Ok(Err(format!(
                "{} may not answer this: only the session's owner ({}) or an approver can",
                actor.user_id, session.owner
            )));
        }
        let Resolution::Approval { choice } = resolution else {
            return Ok(Ok(()));
        };
        if item.kind != InboxItemKind::Approval || !choice.allows() {
            return Ok(Ok(()));
        }
        let offered: Vec<String> = item
            .data
            .get("choices")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default();
        if !offered.is_empty() && !offered.iter().any(|c| c == choice.as_str()) {
            return Ok(Err(format!(
                "\"{}\" was not offered for this call; choose one of: {}",
                choice.as_str(),
                offered.join(", ")
            )));
        }
        let settings = self
            .store()
            .tenants()
            .get(tenant)
            .await?
            .map(|t| t.settings)
            .unwrap_or_default();
        let separation = settings
            .get("separation_of_duties")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if !separation || item.requested_by.as_ref() != Some(&actor.user_id) {
            return Ok(Ok(()));
        }
        let tool = item
            .data
            .get("tool")
            .and_then(|t| t.as_str())
            .unwrap_or_default();
        let config: PermissionConfig = settings
            .get("permissions")
            .and_then(|p| serde_json::from_value(p.clone()).ok())
            .unwrap_or_else(|| self.inner.deps.permissions.clone());
        let metadata = self
            .inner
            .deps
            .tools
            .metadata(tool)
            .or_else(|| engine_tool_metadata(tool));
        let risk = PermissionEngine::new(config).classify(tool, metadata.as_ref());
        if matches!(risk, RiskClass::Exec | RiskClass::External) {
            return Ok(Err(format!(
                "separation of duties: {} asked for this {tool} call and cannot approve it; another approver must",
                actor.user_id
            )));
        }
        Ok(Ok(()))
    }
}
