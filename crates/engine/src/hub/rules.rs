//! Standing rules an automation asks for, granted through the inbox.
//!
//! Invariants: a rule is granted only when an approver or an admin other than its requester
//! allows the item (checked with every other answer, in `authority.rs`), and only the rules the
//! engine would mint itself are kept: one tool that declares a target, one exact target, never a
//! shell command or a local write. A denial drops them all. Either way it is audited.

use serde_json::json;
use workmate_protocol::{Actor, AutomationId, Resolution, TenantId};
use workmate_store::{InboxItem, NewAuditRecord};
use workmate_tools::automations::{RULES_ITEM, StandingRule};

use super::SessionHub;
use crate::automations::{AutomationError, settle_requested_rules};
use crate::permissions::{RequestedPermission, RiskClass, classify, grant_entries};
use crate::{Error, Result};

impl SessionHub {
    /// The rule entry (`"<tool> <target>"`) the engine would mint for `requested`, if any. Shell
    /// and local writes never are: the engine only matches rules of external calls, so such a
    /// rule would be inert, and alarming to read.
    pub fn grantable_rule(&self, requested: &RequestedPermission) -> Option<String> {
        let metadata = |tool: &str| self.tool_metadata(tool);
        let never = matches!(
            classify(&requested.tool, metadata(&requested.tool).as_ref(), &[]),
            RiskClass::Exec | RiskClass::WriteLocal
        );
        grant_entries(std::slice::from_ref(requested), metadata)
            .into_iter()
            .next()
            .filter(|_| !never)
    }

    /// Grants (validated) or drops the rules an answered automation-rules item carried.
    pub(super) async fn settle_rules(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        resolution: &Resolution,
        actor: &Actor,
    ) -> Result<()> {
        let Some(id) = item.data.get(RULES_ITEM).and_then(|v| v.as_str()) else {
            return Ok(());
        };
        let allow = matches!(resolution, Resolution::Approval { choice } if choice.allows());
        let keep = |rule: &StandingRule| {
            let requested = RequestedPermission {
                tool: rule.tool.clone(),
                target: rule.target.clone(),
                access: "write".into(),
            };
            self.grantable_rule(&requested).is_some()
        };
        let automation = AutomationId::from(id);
        let granted =
            match settle_requested_rules(self.store(), tenant, &automation, allow, keep).await {
                Ok(settled) => settled.map(|(_, granted)| granted).unwrap_or_default(),
                // Settled another way meanwhile (an approver's API call): nothing is left to grant.
                Err(AutomationError::Invalid(_)) => Vec::new(),
                Err(AutomationError::Store(e)) => return Err(e.into()),
                Err(e) => return Err(Error::Rejected(e.to_string())),
            };
        let record = NewAuditRecord {
            session_id: Some(item.session_id.clone()),
            actor: Some(actor.user_id.to_string()),
            stage: if allow {
                "standing_rules_granted".into()
            } else {
                "standing_rules_denied".into()
            },
            tool: None,
            status: Some(if allow { "granted" } else { "denied" }.into()),
            detail: json!({
                "automation": automation,
                "granted": granted.iter().map(StandingRule::entry).collect::<Vec<_>>(),
                "item_id": item.id,
            }),
        };
        self.store().audit().append(tenant, &record).await?;
        Ok(())
    }
}
