//! Asking a person to approve a call, and applying what they chose.
//!
//! Invariants: the prompt names the tool, why it asks, and exactly what the call would do (its
//! arguments), and offers only the choices that apply; a grant a person gives ("always this
//! tool", "always this command", "read-only commands") is stored with the session before the call
//! runs, so it survives a restart; anything but an allowing answer is a denial.

use std::collections::BTreeSet;

use workmate_protocol::{
    ApprovalChoice, EventKind, InboxItemKind, Resolution, ToolCall, ToolStatus,
};
use workmate_store::NewInboxItem;

use super::outcome::Outcome;
use super::preview::args_preview;
use super::{INTERRUPTED_BY_USER, Turn};
use crate::Result;
use crate::inbox_wait::Waited;
use crate::permissions::{PermissionConfig, PermissionEngine, PolicyContext, TenantPolicy};
use crate::quorum::{Quorum, quorum_for};
use crate::tenant_settings;

/// What an approval prompt shows.
#[derive(Debug)]
pub(crate) struct Prompt {
    pub(crate) reason: String,
    pub(crate) choices: Vec<ApprovalChoice>,
    pub(crate) standing_target: Option<String>,
    pub(crate) readonly_ok: bool,
    pub(crate) category: String,
}

impl Turn {
    /// The tenant's permission policy: its `permissions` setting, else the engine's default, and
    /// the settings beside it (`shell_standing_choices`, `web_fetch_allow`).
    pub(crate) async fn tenant_permissions(&self) -> Result<PermissionEngine> {
        let tenant = self.deps.store.tenants().get(&self.emit.tenant).await?;
        let settings = tenant.map(|t| t.settings).unwrap_or_default();
        let configured = settings.get("permissions").cloned();
        let config = match configured.map(serde_json::from_value::<PermissionConfig>) {
            Some(Ok(config)) => config,
            Some(Err(e)) => {
                tracing::warn!(tenant = %self.emit.tenant, error = %e, "Ignoring the tenant's unreadable permissions setting.");
                self.deps.permissions.clone()
            }
            None => self.deps.permissions.clone(),
        };
        let policy = TenantPolicy {
            shell_standing_choices: tenant_settings::shell_standing_choices(&settings),
            web_fetch_allow: tenant_settings::web_fetch_allow(&settings),
            network_tools: tenant_settings::network_tools(&settings),
        };
        Ok(PermissionEngine::new(config).with_policy(policy))
    }

    /// The session's current permission context (its mode and grants are re-read, so a change
    /// made mid-turn applies to the next call).
    pub(crate) async fn policy_context(&self) -> Result<PolicyContext> {
        let record = self.emit.runtime.record();
        let (mode, grants) = (
            record.mode,
            serde_json::from_value(record.grants).unwrap_or_default(),
        );
        let mut context = PolicyContext {
            mode,
            roots: self.roots.clone(),
            grants,
            ..PolicyContext::default()
        };
        if let Some(automation) = self.automation_settings().await? {
            context.automation = true;
            for rule in automation.standing_rules {
                context
                    .standing_rules
                    .entry(rule.tool)
                    .or_default()
                    .insert(rule.target);
            }
        }
        Ok(context)
    }

    /// The quorum the tenant's `approval_quorum` asks of a call of `category` in this session's
    /// chat, when it needs more than one approval.
    async fn quorum(&self, category: &str) -> Result<Option<Quorum>> {
        let tenant = self.deps.store.tenants().get(&self.emit.tenant).await?;
        let settings = tenant.map(|t| t.settings).unwrap_or_default();
        let chat_id = self.emit.runtime.record().key.chat_id;
        Ok(quorum_for(&settings, category, &chat_id))
    }

    /// Parks an approval prompt and waits for the answer.
    pub(crate) async fn ask_approval(
        &mut self,
        call: ToolCall,
        prompt: Prompt,
    ) -> Result<Option<ToolCall>> {
        let quorum = self.quorum(&prompt.category).await?;
        let new = NewInboxItem {
            session_id: self.emit.session.clone(),
            tool_call_id: Some(call.id.clone()),
            kind: InboxItemKind::Approval,
            title: format!("Run `{}`?", call.name),
            body: format!("{} · {}", prompt.reason, args_preview(&call.arguments, 240)),
            inbox: "default".into(),
            visibility: self.visibility(),
            requested_by: Some(self.requester.clone()),
            data: serde_json::json!({
                "tool": call.name,
                "arguments": call.arguments,
                "reason": prompt.reason,
                "category": prompt.category,
                "choices": prompt.choices,
                "standing_target": prompt.standing_target,
                "readonly_ok": prompt.readonly_ok,
                "quorum": quorum,
            }),
        };
        let (item, created) = self.park(new).await?;
        if created {
            self.emit.state(EventKind::PermissionRequired {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                reason: prompt.reason.clone(),
                category: prompt.category.clone(),
                standing_target: prompt.standing_target.clone(),
                readonly_ok: prompt.readonly_ok,
                choices: prompt.choices.clone(),
                approvals_required: quorum.as_ref().map(|q| q.required).filter(|&n| n > 1),
            })?;
            self.announce_parked(&item).await?;
            self.audit_approval(&call, "approval_requested", None, &prompt.reason)
                .await?;
        }
        let choice = match self.wait_for(&item).await? {
            Waited::Resolved(resolved) => match resolved.resolution {
                Some(Resolution::Approval { choice }) if choice.allows() => Ok(choice),
                _ => Err("denied by user"),
            },
            Waited::Interrupted => Err(INTERRUPTED_BY_USER),
        };
        match choice {
            Ok(choice) => {
                self.grant(&call, choice, &prompt).await?;
                self.audit_approval(
                    &call,
                    "approval_resolved",
                    Some("approved"),
                    "approved by user",
                )
                .await?;
                self.approve(&call).await?;
                Ok(Some(call))
            }
            Err(why) => {
                self.audit_approval(&call, "approval_resolved", Some("denied"), why)
                    .await?;
                let status = if why == INTERRUPTED_BY_USER {
                    ToolStatus::Interrupted
                } else {
                    ToolStatus::Denied
                };
                self.answer(&call, Outcome::not_executed(status, why))
                    .await?;
                Ok(None)
            }
        }
    }

    /// Stores the grant an allowing choice carries. A choice that was not offered grants nothing
    /// beyond this one call.
    async fn grant(&self, call: &ToolCall, choice: ApprovalChoice, prompt: &Prompt) -> Result<()> {
        if !prompt.choices.contains(&choice) {
            return Ok(());
        }
        let mut grants = self.policy_context().await?.grants;
        let before = grants.clone();
        match choice {
            ApprovalChoice::AlwaysTool => {
                grants.tools.insert(call.name.clone());
            }
            ApprovalChoice::AlwaysCommand => {
                if let Some(command) = call
                    .arguments
                    .get("command")
                    .and_then(serde_json::Value::as_str)
                {
                    let command = command.trim();
                    if !command.is_empty() {
                        grants.commands.insert(command.to_owned());
                    }
                }
            }
            ApprovalChoice::ReadonlySession => grants.readonly = true,
            ApprovalChoice::AlwaysTask => {
                self.mint_standing_rule(call, prompt.standing_target.as_deref())
                    .await?;
            }
            _ => {}
        }
        if grants != before {
            let value = serde_json::to_value(&grants).unwrap_or_default();
            let detail = serde_json::json!({ "choice": choice, "tools": grants.tools, "commands": grants.commands.iter().collect::<BTreeSet<_>>(), "readonly": grants.readonly });
            // The grant and its audit record are one step.
            self.emit.write(crate::emitter::Step {
                audit: vec![self.audit_record(call, "grant_added", Some(choice.as_str()), detail)],
                change: workmate_store::SessionChange {
                    grants: Some(value),
                    ..workmate_store::SessionChange::default()
                },
                ..crate::emitter::Step::default()
            })?;
        }
        Ok(())
    }
}
