//! What changes when the session is an automation run: the automation's standing rules apply,
//! the scheduled approver clears local writes inside the run's own workspace, "always for this
//! automation and target" becomes a standing rule, and the scheduling tools are out of reach.
//!
//! Invariant: none of this widens what is allowed outside runs; a standing rule is minted only
//! for the exact target the prompt showed, on an external tool, for this one automation.

use workmate_protocol::ToolCall;
use workmate_tools::ToolMetadata;
use workmate_tools::automations::{AutomationSettings, StandingRule};

use super::Turn;
use crate::Result;
use crate::permissions::RiskClass;

/// The tool category the scheduling tools share; runs never see it.
const SCHEDULING_CATEGORY: &str = "automation";

impl Turn {
    /// The settings of the automation this session runs for, if it is a run.
    pub(crate) async fn automation_settings(&self) -> Result<Option<AutomationSettings>> {
        let Some(id) = crate::scheduler::run_automation(&self.session.key) else {
            return Ok(None);
        };
        let found = self
            .deps
            .store
            .automations()
            .get(&self.emit.tenant, &id)
            .await?;
        Ok(found.map(|a| AutomationSettings::from_json(&a.settings)))
    }

    /// Whether this session is an automation run.
    pub(crate) fn is_run(&self) -> bool {
        crate::scheduler::run_automation(&self.session.key).is_some()
    }

    /// Whether the model may be offered `tool`: scheduling tools stay out of runs.
    pub(crate) fn offers_tool(&self, tool: &str) -> bool {
        !self.is_run()
            || self
                .tools
                .metadata(tool)
                .is_none_or(|m| m.category != SCHEDULING_CATEGORY)
    }

    /// The scheduled approver: in a run, a local write the permission engine would ask about
    /// is approved once (the engine has already denied anything outside the run's folders).
    pub(crate) fn scheduled_approver_allows(
        &self,
        call: &ToolCall,
        metadata: Option<&ToolMetadata>,
    ) -> bool {
        self.is_run() && self.permissions.classify(&call.name, metadata) == RiskClass::WriteLocal
    }

    /// Adds "always allow this tool on `target`" to the run's automation and audits it.
    pub(crate) async fn mint_standing_rule(
        &self,
        call: &ToolCall,
        target: Option<&str>,
    ) -> Result<()> {
        let Some(target) = target.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(());
        };
        let Some(id) = crate::scheduler::run_automation(&self.session.key) else {
            return Ok(());
        };
        let automations = self.deps.store.automations();
        let Some(mut automation) = automations.get(&self.emit.tenant, &id).await? else {
            return Ok(());
        };
        let mut settings = AutomationSettings::from_json(&automation.settings);
        let rule = StandingRule {
            tool: call.name.clone(),
            target: target.to_owned(),
        };
        let entry = rule.entry();
        if !settings.add_rule(rule) {
            return Ok(());
        }
        automation.settings = settings.to_json();
        automations.update(&automation).await?;
        let detail = serde_json::json!({ "automation_id": id, "entry": entry });
        self.audit(call, "standing_rule_minted", Some("always_task"), detail)
    }
}
