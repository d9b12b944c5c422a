//! Standing rules an automation asks for: who may grant them, and the inbox item that waits for
//! an approver.
//!
//! Invariants: a rule is granted only by an approver or an admin, never by the request that
//! created the automation; what waits is listed on the automation (`requested_rules`) and, as an
//! approval item, in the tenant's inbox (answered through the engine, which validates and audits).

use serde_json::json;
use workmate_protocol::{
    ApprovalChoice, AutomationId, InboxItemKind, PermissionMode, Resolution, Surface, TenantId,
    ToolCallId, UserId, Visibility,
};
use workmate_store::{
    Automation, InboxFilter, InboxItem, InboxItemState, NewInboxItem, NewSession, Role, SessionKey,
    Store,
};

use workmate_tools::automations::{AutomationSettings, RULES_ITEM, StandingRule};

use super::AutomationError;
use super::service::Result;

/// Refuses unless `user` is an approver or an admin of the tenant: those may grant standing rules.
pub async fn check_approver(store: &Store, tenant: &TenantId, user: &UserId) -> Result<()> {
    let role = store
        .tenants()
        .get_user(tenant, user)
        .await?
        .map_or(Role::Member, |u| u.role);
    match role {
        Role::Approver | Role::Admin => Ok(()),
        Role::Member => Err(AutomationError::Forbidden(
            "only approvers and admins may approve or deny an automation's standing rules".into(),
        )),
    }
}

/// Whether `user` may grant standing rules at once (an approver or an admin).
pub async fn may_grant_rules(store: &Store, tenant: &TenantId, user: &UserId) -> Result<bool> {
    match check_approver(store, tenant, user).await {
        Ok(()) => Ok(true),
        Err(AutomationError::Forbidden(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Settles the rules waiting on an automation: with `allow`, those `keep` accepts become standing
/// rules; either way none wait any more. `None` if the tenant has no such automation; `Invalid`
/// if nothing was waiting. The caller checks that the person settling may ([`check_approver`]).
pub async fn settle_requested_rules(
    store: &Store,
    tenant: &TenantId,
    id: &AutomationId,
    allow: bool,
    keep: impl Fn(&StandingRule) -> bool,
) -> Result<Option<(Automation, Vec<StandingRule>)>> {
    let Some(mut automation) = store.automations().get(tenant, id).await? else {
        return Ok(None);
    };
    let mut settings = AutomationSettings::from_json(&automation.settings);
    if settings.requested_rules.is_empty() {
        return Err(AutomationError::Invalid(format!(
            "“{}” has no standing rules waiting for approval",
            automation.title
        )));
    }
    let requested = std::mem::take(&mut settings.requested_rules);
    let mut granted = Vec::new();
    if allow {
        for rule in requested.into_iter().filter(|r| keep(r)) {
            if settings.add_rule(rule.clone()) {
                granted.push(rule);
            }
        }
    }
    automation.settings = settings.to_json();
    Ok(store
        .automations()
        .update(&automation)
        .await?
        .map(|a| (a, granted)))
}

/// The session an automation's rule requests are parked in: apart from every run and thread.
fn rules_session_key(automation: &AutomationId) -> SessionKey {
    SessionKey {
        surface: Surface::Scheduler,
        chat_id: automation.as_str().to_owned(),
        thread_id: "rules".to_owned(),
    }
}

/// Parks an approval in the tenant's inbox for the standing rules `automation` asks for, so an
/// approver or an admin (never its requester) grants or drops them. Nothing when none wait.
pub async fn ask_for_rules(
    store: &Store,
    tenant: &TenantId,
    automation: &Automation,
) -> Result<Option<InboxItem>> {
    let settings = AutomationSettings::from_json(&automation.settings);
    if settings.requested_rules.is_empty() {
        return Ok(None);
    }
    let session = NewSession {
        key: rules_session_key(&automation.id),
        owner: automation.owner.clone(),
        title: Some(format!("Standing rules of “{}”", automation.title)),
        persona: "cowork".into(),
        model: String::new(),
        mode: PermissionMode::Interactive,
        unattended: true,
    };
    let (session, _) = store.sessions().get_or_create(tenant, &session).await?;
    let entries: Vec<String> = settings
        .requested_rules
        .iter()
        .map(StandingRule::entry)
        .collect();
    let item = NewInboxItem {
        session_id: session.id,
        tool_call_id: Some(ToolCallId::from(format!(
            "rules-{}-{}",
            automation.id,
            store.clock_ms()
        ))),
        kind: InboxItemKind::Approval,
        title: format!(
            "Let the runs of “{}” make these calls without asking",
            automation.title
        ),
        body: entries
            .iter()
            .map(|e| format!("• {e}"))
            .collect::<Vec<_>>()
            .join("\n"),
        inbox: "default".into(),
        visibility: Visibility::Inbox,
        requested_by: Some(automation.owner.clone()),
        data: json!({
            RULES_ITEM: automation.id,
            "rules": entries,
            "choices": ["once", "deny"],
        }),
    };
    Ok(Some(store.inbox().park(tenant, &item).await?.0))
}

/// Answers the pending rule requests of `automation` (after they were settled another way), so
/// none waits in the inbox for rules that are gone.
pub async fn close_rule_requests(
    store: &Store,
    tenant: &TenantId,
    automation: &AutomationId,
    by: &UserId,
    allowed: bool,
) -> Result<()> {
    let Some(session) = store
        .sessions()
        .find_by_key(tenant, &rules_session_key(automation))
        .await?
    else {
        return Ok(());
    };
    let filter = InboxFilter {
        session: Some(session.id),
        state: Some(InboxItemState::Pending),
        ..InboxFilter::default()
    };
    let choice = if allowed {
        ApprovalChoice::Once
    } else {
        ApprovalChoice::Deny
    };
    for item in store.inbox().list(tenant, &filter, 100).await? {
        store
            .inbox()
            .resolve(
                tenant,
                &item.id,
                &Resolution::Approval { choice },
                by,
                Surface::Http,
            )
            .await?;
    }
    Ok(())
}
