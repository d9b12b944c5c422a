//! Offboarding on every backend: one transaction deactivates the user and revokes what they
//! hold; approvals counted towards a quorum, on every backend.

use workmate_protocol::{ApprovalChoice, InboxItemKind, Resolution, Surface, UserId, Visibility};
use workmate_store::{InboxItemState, NewInboxItem, NewUser, ResolveOutcome, Role};

use crate::support::tenant_with_session;

fn prompt(session: &workmate_protocol::SessionId, call: &str) -> NewInboxItem {
    NewInboxItem {
        session_id: session.clone(),
        tool_call_id: Some(call.into()),
        kind: InboxItemKind::Approval,
        title: "Run `run_shell`?".into(),
        body: "echo hi".into(),
        inbox: "default".into(),
        visibility: Visibility::Inline,
        requested_by: Some(UserId::from("u_alice")),
        data: serde_json::json!({"tool": "run_shell"}),
    }
}

backend_matrix! {
    async fn deprovisioning_deactivates_and_dismisses_in_one_go(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "offboard").await;
        let alice = NewUser { id: "u_alice".into(), display_name: "Alice".into(), email: None, role: Role::Member, sso_subject: None };
        ctx.store.tenants().upsert_user(&tenant, &alice).await.unwrap();
        let (item, _) = ctx.store.inbox().park(&tenant, &prompt(&session.id, "call_1")).await.unwrap();
        // Alice's own credential, and one of the tenant's that stays.
        let keys: std::sync::Arc<dyn workmate_vault::KeyProvider> = std::sync::Arc::new(workmate_vault::Keyring::new(
            workmate_vault::MasterKey::from_bytes([7; 32], "test key"), Vec::new()));
        let vault = workmate_store::Vault::new(ctx.store.clone(), keys);
        let secret = workmate_vault::SecretString::from("ghp_alices_token".to_owned());
        let alice_id = UserId::from("u_alice");
        vault.put(&tenant, Some(&alice_id), "connector/github/token", &secret).await.unwrap();
        vault.put(&tenant, None, "platform/slack/bot_token", &secret).await.unwrap();
        let admin = UserId::from("admin");
        let done = ctx.store.offboarding().deprovision(&tenant, &"u_alice".into(), &admin).await.unwrap();
        assert!(!done.already);
        assert_eq!(done.items_dismissed.len(), 1);
        assert_eq!(done.credentials_revoked, 1);
        assert!(vault.get(&tenant, Some(&alice_id), "connector/github/token").await.unwrap().is_none());
        assert!(vault.get(&tenant, None, "platform/slack/bot_token").await.unwrap().is_some());
        let user = ctx.store.tenants().get_user(&tenant, &"u_alice".into()).await.unwrap().unwrap();
        assert!(user.is_disabled());
        let stored = ctx.store.inbox().get(&tenant, &item.id).await.unwrap().unwrap();
        assert_eq!(stored.state, InboxItemState::Resolved);
        assert_eq!(stored.resolution, Some(Resolution::Dismissed { reason: "owner offboarded".into() }));
        let again = ctx.store.offboarding().deprovision(&tenant, &"u_alice".into(), &admin).await.unwrap();
        assert!(again.already);
        assert!(again.items_dismissed.is_empty());
        assert!(ctx.store.offboarding().reactivate(&tenant, &"u_alice".into(), &admin).await.unwrap());
        let user = ctx.store.tenants().get_user(&tenant, &"u_alice".into()).await.unwrap().unwrap();
        assert!(!user.is_disabled());
        let missing = ctx.store.offboarding().deprovision(&tenant, &"u_nobody".into(), &admin).await;
        assert!(missing.is_err());
    }

    async fn a_quorum_counts_each_approver_once_and_resolves_on_the_last(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "quorum").await;
        let (item, _) = ctx.store.inbox().park(&tenant, &prompt(&session.id, "call_q")).await.unwrap();
        let inbox = ctx.store.inbox();
        for _ in 0..2 {
            let counted = inbox.count_approval(&tenant, &item.id, &"u_bob".into(), ApprovalChoice::AlwaysTool, Surface::Slack, 2).await.unwrap();
            assert!(matches!(&counted, ResolveOutcome::Counted { approvals, .. } if approvals.len() == 1), "{counted:?}");
        }
        let done = inbox.count_approval(&tenant, &item.id, &"u_carol".into(), ApprovalChoice::Once, Surface::Slack, 2).await.unwrap();
        let ResolveOutcome::Resolved(resolved) = done else { panic!("{done:?}") };
        assert_eq!(resolved.resolution, Some(Resolution::Approval { choice: ApprovalChoice::Once }));
        assert_eq!(resolved.resolved_by, Some("u_carol".into()));
        let late = inbox.count_approval(&tenant, &item.id, &"u_dave".into(), ApprovalChoice::Once, Surface::Slack, 2).await.unwrap();
        assert!(matches!(late, ResolveOutcome::AlreadyResolved(_)));
    }
}
