//! Who may act on a session, and who may answer a parked prompt.
//!
//! Invariants, for every surface (API, chat, scheduler), checked here in the engine rather than
//! per route: only the session's owner or a tenant admin may send a session messages (in a
//! session an admin shared, any active user of the tenant may send messages, and whoever asked
//! for the running turn may stop it), stop it,
//! retry it, switch its model or set its mode (the scheduler and wakes act as the owner); a mode
//! must be one the actor may choose (tenant setting `modes_allowed` for everyone but admins).
//! A refused command changes nothing, says why, and is audited (`command_refused`).
//!
//! For every way of answering a prompt (API, card button, text reply): the session's owner (in a
//! shared session: the person who asked), the tenant's approvers and its admins may answer; anyone
//! else is refused; under the tenant setting `separation_of_duties`, nobody may approve a shell or
//! external call they asked for themselves (they may still deny it); a choice the prompt did not
//! offer is refused; in a tenant whose `identity_binding` is required, a chat account not linked
//! to the directory never approves (it may still deny). A refusal changes nothing, says why, and
//! is audited.

use workmate_protocol::{
    Actor, Command, InboxItemKind, PermissionMode, Resolution, SessionId, Surface, TenantId, UserId,
};
use workmate_store::{InboxItem, NewAuditRecord, Role, SessionRecord, Store};

use super::SessionHub;
use crate::permissions::{PermissionConfig, PermissionEngine, RiskClass};
use crate::turn::engine_tool_metadata;
use crate::{Error, Result};

/// Refuses `mode` unless `user` may choose it: an admin may choose any mode, anyone else one
/// listed in the tenant setting `modes_allowed` (default `discuss`, `plan`, `interactive`). Used
/// for `SetMode` and by whatever creates a session with a mode (e.g. `POST /v1/sessions`).
pub async fn check_mode(
    store: &Store,
    tenant: &TenantId,
    user: &UserId,
    mode: PermissionMode,
) -> Result<()> {
    let role = store
        .tenants()
        .get_user(tenant, user)
        .await?
        .map(|u| u.role);
    if role == Some(Role::Admin) {
        return Ok(());
    }
    let settings = store.tenants().settings(tenant).await?;
    let allowed = crate::tenant_settings::modes_allowed(&settings);
    if allowed.contains(&mode) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|m| m.as_str()).collect();
    Err(Error::Forbidden(format!(
        "You may not choose the {} mode: this workspace lets members choose {} \
         (setting `modes_allowed`); a tenant admin may choose any mode",
        mode.as_str(),
        names.join(", ")
    )))
}

/// What a command would do, for a refusal: "may not {verb} this session".
fn verb(command: &Command) -> &'static str {
    match command {
        Command::UserMessage { .. } => "send messages to",
        Command::Interrupt { .. } => "stop",
        Command::SetMode { .. } => "change the mode of",
        Command::SwitchModel { .. } => "switch the model of",
        Command::SetPersona { .. } => "switch the persona of",
        Command::Retry { .. } => "retry",
        Command::Compact { .. } => "compact",
        _ => "act on",
    }
}

impl SessionHub {
    /// Refuses (and audits) a command from anyone but the session's owner or a tenant admin, and
    /// a mode its actor may not choose. Answers to prompts have their own rule
    /// ([`SessionHub::check_resolver`]).
    pub(super) async fn check_acting(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        command: &Command,
    ) -> Result<()> {
        if matches!(command, Command::ResolveInbox { .. }) {
            return Ok(());
        }
        let actor = command.actor();
        let record = self.record(tenant, session).await?;
        let mut refusal = None;
        if record.owner != actor.user_id {
            let user = self
                .store()
                .tenants()
                .get_user(tenant, &actor.user_id)
                .await?;
            let role = user.as_ref().map(|u| u.role);
            let active = user.as_ref().is_some_and(|u| !u.is_disabled());
            let allowed_in_shared = active
                && match command {
                    Command::UserMessage { .. } => self.is_shared(tenant, &record).await?,
                    // Whoever asked for the running turn may stop it.
                    Command::Interrupt { .. } => {
                        self.is_shared(tenant, &record).await?
                            && self.running_turn_author(tenant, &record).await?.as_ref()
                                == Some(&actor.user_id)
                    }
                    _ => false,
                };
            if role != Some(Role::Admin) && !allowed_in_shared {
                refusal = Some(format!(
                    "You may not {} this conversation: only {} (who started it) or a tenant \
                     admin can",
                    verb(command),
                    self.shown_name(tenant, &record.owner).await?
                ));
            }
        }
        if refusal.is_none()
            && let Command::SetMode { mode, .. } = command
        {
            match check_mode(self.store(), tenant, &actor.user_id, *mode).await {
                Ok(()) => {}
                Err(Error::Forbidden(reason)) => refusal = Some(reason),
                Err(e) => return Err(e),
            }
        }
        let Some(reason) = refusal else {
            return Ok(());
        };
        let record = NewAuditRecord {
            session_id: Some(session.clone()),
            actor: Some(actor.user_id.to_string()),
            stage: "command_refused".into(),
            tool: None,
            status: Some("refused".into()),
            detail: serde_json::json!({ "command": command.name(), "reason": reason }),
        };
        self.store().audit().append(tenant, &record).await?;
        Err(Error::Forbidden(reason))
    }

    /// Whether anyone in the session's group or thread may talk to it. The copy this replica
    /// holds may be older than a change made on another: a session not shared here is read
    /// again before anyone is refused.
    async fn is_shared(&self, tenant: &TenantId, record: &SessionRecord) -> Result<bool> {
        if record.shared {
            return Ok(true);
        }
        Ok(self
            .store()
            .sessions()
            .get(tenant, &record.id)
            .await?
            .is_some_and(|stored| stored.shared))
    }

    /// Who wrote the message that started the session's newest turn, if it was a person's.
    async fn running_turn_author(
        &self,
        tenant: &TenantId,
        record: &SessionRecord,
    ) -> Result<Option<UserId>> {
        const RECENT: u32 = 500;
        let after = record.last_seq.saturating_sub(u64::from(RECENT));
        let events = self
            .store()
            .events()
            .list_after(tenant, &record.id, after, RECENT)
            .await?;
        Ok(events
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                workmate_protocol::EventKind::TurnStart { author, .. } => {
                    Some(author.as_ref().map(|a| a.user_id.clone()))
                }
                _ => None,
            })
            .flatten())
    }

    /// Makes `session` shared (anyone in its group or thread may talk to it; answers to its
    /// prompts keep their own rule) or its owner's own again, as `by`, audited
    /// (`conversation_shared`). Only its owner or an admin may; `Forbidden` otherwise.
    pub async fn share_session(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        shared: bool,
        by: &Actor,
    ) -> Result<()> {
        let record = self.record(tenant, session).await?;
        let role = self
            .store()
            .tenants()
            .get_user(tenant, &by.user_id)
            .await?
            .map(|u| u.role);
        if role != Some(Role::Admin) {
            return Err(Error::Forbidden(
                "Only a tenant admin can change who talks to this conversation".into(),
            ));
        }
        self.store()
            .sessions()
            .set_shared(tenant, &record.id, shared)
            .await?;
        if let Ok(runtime) = self.runtime(tenant, session).await {
            runtime.update_record(|r| r.shared = shared);
        }
        let audit = NewAuditRecord {
            session_id: Some(session.clone()),
            actor: Some(by.user_id.to_string()),
            stage: "conversation_shared".into(),
            tool: None,
            status: Some(if shared { "shared" } else { "personal" }.into()),
            detail: serde_json::json!({ "shared": shared }),
        };
        self.store().audit().append(tenant, &audit).await?;
        Ok(())
    }

    /// The tenant's settings (an empty object for a tenant without a row).
    pub(super) async fn tenant_settings(&self, tenant: &TenantId) -> Result<serde_json::Value> {
        Ok(self.store().tenants().settings(tenant).await?)
    }

    /// Whether `item` waits for approvers: a prompt the person who asked cannot approve alone
    /// (separation of duties, an automation's standing rules, a quorum of several) or that
    /// nobody asked for. Approvers are then told of it privately.
    pub async fn waits_for_approvers(&self, tenant: &TenantId, item: &InboxItem) -> Result<bool> {
        if item.kind != InboxItemKind::Approval {
            return Ok(false);
        }
        let quorum = item
            .data
            .pointer("/quorum/required")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(1);
        if quorum > 1 {
            return Ok(true);
        }
        let Some(asker) = &item.requested_by else {
            return Ok(true);
        };
        let once = Resolution::Approval {
            choice: workmate_protocol::ApprovalChoice::Once,
        };
        let alone = self
            .resolver_may(
                tenant,
                item,
                &once,
                &Actor::new(asker.clone()),
                Surface::System,
            )
            .await?;
        Ok(alone.is_err())
    }

    /// Refuses (and audits) an answer `actor` may not give to `item`.
    pub(super) async fn check_resolver(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        resolution: &Resolution,
        actor: &Actor,
        via: Surface,
    ) -> Result<()> {
        let Err(reason) = self
            .resolver_may(tenant, item, resolution, actor, via)
            .await?
        else {
            return Ok(());
        };
        Err(self.refuse_answer(tenant, item, actor, via, reason).await?)
    }

    /// Audits an answer refused for `reason` (`approval_refused`); the error to return.
    pub(super) async fn refuse_answer(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        actor: &Actor,
        via: Surface,
        reason: String,
    ) -> Result<Error> {
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
        Ok(Error::Forbidden(reason))
    }

    async fn resolver_may(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        resolution: &Resolution,
        actor: &Actor,
        via: Surface,
    ) -> Result<Result<(), String>> {
        let session = self.record(tenant, &item.session_id).await?;
        let user = self
            .store()
            .tenants()
            .get_user(tenant, &actor.user_id)
            .await?;
        let role = user.as_ref().map(|u| u.role);
        if resolution_allows(resolution)
            && via.is_chat()
            && user.as_ref().is_none_or(|u| u.sso_subject.is_none())
        {
            let settings = self.tenant_settings(tenant).await?;
            if crate::binding::binding_policy(&settings).required {
                return Ok(Err(
                    "Link your chat account to the company directory first (from the card \
                     workmate sent you), then approve again: this workspace lets only linked \
                     accounts approve"
                        .into(),
                ));
            }
        }
        if item
            .data
            .get(workmate_tools::automations::RULES_ITEM)
            .is_some()
        {
            // An automation's standing rules: an approver or an admin grants them, never the
            // person who asked for them (its owner, usually a member).
            if !matches!(role, Some(Role::Approver | Role::Admin)) {
                return Ok(Err(
                    "Only an approver or an admin can grant an automation's standing rules".into(),
                ));
            }
            if item.requested_by.as_ref() == Some(&actor.user_id) && resolution_allows(resolution) {
                return Ok(Err(
                    "You asked for these rules and cannot grant them; another approver or an \
                     admin must"
                        .into(),
                ));
            }
            return Ok(Ok(()));
        }
        // In a shared conversation anyone may write, so the one who answers their own prompt is
        // the person who asked (the author of the message that led to it), not its starter.
        let (asker, whose) = if self.is_shared(tenant, &session).await? {
            (item.requested_by.as_ref(), "who asked")
        } else {
            (Some(&session.owner), "whose conversation this is")
        };
        if asker != Some(&actor.user_id) && !matches!(role, Some(Role::Approver | Role::Admin)) {
            return Ok(Err(match asker {
                Some(asker) => format!(
                    "Only {} ({whose}) or an approver can answer this",
                    self.shown_name(tenant, asker).await?
                ),
                None => "Only an approver can answer this".to_owned(),
            }));
        }
        if let Some(mode) = resolution.plan_mode() {
            // Implementing a plan in a mode is choosing that mode: the same rule as `set_mode`.
            return match check_mode(self.store(), tenant, &actor.user_id, mode).await {
                Ok(()) => Ok(Ok(())),
                Err(Error::Forbidden(reason)) => Ok(Err(reason)),
                Err(e) => Err(e),
            };
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
        let settings = self.tenant_settings(tenant).await?;
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
            .tool_metadata(tool)
            .or_else(|| engine_tool_metadata(tool));
        let risk = PermissionEngine::new(config).classify(tool, metadata.as_ref());
        if matches!(risk, RiskClass::Exec | RiskClass::External) {
            return Ok(Err(format!(
                "Separation of duties: you asked for this {tool} call and cannot approve it; \
                 another approver must"
            )));
        }
        Ok(Ok(()))
    }

    /// How a refusal names a person: their display name, or their id when none is known.
    async fn shown_name(&self, tenant: &TenantId, user: &UserId) -> Result<String> {
        let found = self.store().tenants().get_user(tenant, user).await?;
        Ok(found
            .map(|u| u.display_name)
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| user.to_string()))
    }
}

/// Whether an answer allows what was asked.
fn resolution_allows(resolution: &Resolution) -> bool {
    matches!(resolution, Resolution::Approval { choice } if choice.allows())
        || resolution.plan_mode().is_some()
}
