//! Role changes keep a tenant's last admin; what each role sees of sessions and the inbox.

use workmate_protocol::{InboxItemKind, PermissionMode, Surface, TenantId, UserId, Visibility};
use workmate_store::{
    Error, InboxFilter, NewInboxItem, NewSession, NewUser, Role, RoleChange, SessionKey, Sight,
    Store,
};

use crate::support::tenant_with_session;

/// Rounds of two racing demotions per backend.
const RACE_ROUNDS: usize = 30;

async fn add_user(store: &Store, tenant: &TenantId, id: &str, role: Role) -> UserId {
    let user = NewUser {
        id: id.into(),
        display_name: id.into(),
        email: None,
        role,
        sso_subject: None,
    };
    store.tenants().upsert_user(tenant, &user).await.unwrap().id
}

async fn admins(store: &Store, tenant: &TenantId) -> usize {
    store
        .tenants()
        .users_with_role(tenant, Role::Admin)
        .await
        .unwrap()
        .len()
}

async fn session_of(
    store: &Store,
    tenant: &TenantId,
    owner: &UserId,
) -> workmate_store::SessionRecord {
    let new = NewSession {
        key: SessionKey {
            surface: Surface::Http,
            chat_id: format!("chat-{owner}"),
            thread_id: String::new(),
        },
        owner: owner.clone(),
        title: None,
        persona: "cowork".into(),
        model: "scripted:demo".into(),
        mode: PermissionMode::Interactive,
        unattended: false,
    };
    store
        .sessions()
        .get_or_create(tenant, &new)
        .await
        .unwrap()
        .0
}

fn prompt(session: &workmate_protocol::SessionId, by: &UserId) -> NewInboxItem {
    NewInboxItem {
        session_id: session.clone(),
        tool_call_id: None,
        kind: InboxItemKind::Approval,
        title: "Run `run_shell`?".into(),
        body: String::new(),
        inbox: "default".into(),
        visibility: Visibility::Inbox,
        requested_by: Some(by.clone()),
        data: serde_json::json!({}),
    }
}

backend_matrix! {
    async fn role_changes_report_what_they_did_and_keep_the_last_admin(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "roles").await;
        let tenants = ctx.store.tenants();
        let ada = add_user(&ctx.store, &tenant, "ada", Role::Admin).await;
        let bo = add_user(&ctx.store, &tenant, "bo", Role::Member).await;

        assert_eq!(tenants.change_role(&tenant, &ada, Role::Member).await.unwrap(), RoleChange::LastAdmin);
        assert_eq!(tenants.change_role(&tenant, &ada, Role::Approver).await.unwrap(), RoleChange::LastAdmin);
        assert_eq!(tenants.get_user(&tenant, &ada).await.unwrap().unwrap().role, Role::Admin, "nothing written");
        assert_eq!(tenants.change_role(&tenant, &ada, Role::Admin).await.unwrap(), RoleChange::Unchanged);

        assert_eq!(tenants.change_role(&tenant, &bo, Role::Approver).await.unwrap(), RoleChange::Changed { from: Role::Member });
        assert_eq!(tenants.change_role(&tenant, &bo, Role::Admin).await.unwrap(), RoleChange::Changed { from: Role::Approver });
        assert_eq!(tenants.get_user(&tenant, &bo).await.unwrap().unwrap().role, Role::Admin);
        // With a second admin, the first may step down.
        assert_eq!(tenants.change_role(&tenant, &ada, Role::Member).await.unwrap(), RoleChange::Changed { from: Role::Admin });
        assert_eq!(tenants.change_role(&tenant, &bo, Role::Member).await.unwrap(), RoleChange::LastAdmin);
        assert_eq!(admins(&ctx.store, &tenant).await, 1);

        // Creating a user leaves an existing one as it is.
        let newcomer = NewUser { id: "cy".into(), display_name: "cy".into(), email: None, role: Role::Member, sso_subject: None };
        let (cy, created) = tenants.ensure_user(&tenant, &newcomer).await.unwrap();
        assert!(created);
        assert_eq!((cy.role, cy.display_name.as_str()), (Role::Member, "cy"));
        let renamed = NewUser { display_name: "Someone else".into(), role: Role::Admin, ..newcomer };
        let (again, created) = tenants.ensure_user(&tenant, &renamed).await.unwrap();
        assert!(!created);
        assert_eq!(again, cy);

        let missing = tenants.change_role(&tenant, &UserId::from("nobody"), Role::Admin).await;
        assert!(matches!(missing, Err(Error::NotFound { .. })), "{missing:?}");
        let elsewhere = tenants.change_role(&TenantId::from("no-such-tenant"), &bo, Role::Admin).await;
        assert!(matches!(elsewhere, Err(Error::NotFound { .. })), "{elsewhere:?}");
    }

    async fn racing_demotions_of_two_admins_leave_exactly_one(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "race").await;
        let ada = add_user(&ctx.store, &tenant, "ada", Role::Admin).await;
        let bo = add_user(&ctx.store, &tenant, "bo", Role::Admin).await;
        for round in 0..RACE_ROUNDS {
            let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2));
            let racers = [ada.clone(), bo.clone()].map(|user| {
                let (store, tenant, barrier) = (ctx.store.clone(), tenant.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.tenants().change_role(&tenant, &user, Role::Member).await.unwrap()
                })
            });
            let mut outcomes = Vec::new();
            for racer in racers {
                outcomes.push(racer.await.unwrap());
            }
            let changed = outcomes.iter().filter(|o| **o == RoleChange::Changed { from: Role::Admin }).count();
            let refused = outcomes.iter().filter(|o| **o == RoleChange::LastAdmin).count();
            assert_eq!((changed, refused), (1, 1), "round {round}: {outcomes:?}");
            assert_eq!(admins(&ctx.store, &tenant).await, 1, "round {round}");
            // Both admins again for the next round.
            for user in [&ada, &bo] {
                ctx.store.tenants().change_role(&tenant, user, Role::Admin).await.unwrap();
            }
            assert_eq!(admins(&ctx.store, &tenant).await, 2);
        }
    }

    async fn members_list_their_own_sessions_and_items_and_approvers_all(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "sight").await;
        let alice = add_user(&ctx.store, &tenant, "alice", Role::Member).await;
        let eve = add_user(&ctx.store, &tenant, "eve", Role::Member).await;
        add_user(&ctx.store, &tenant, "bob", Role::Approver).await;
        let mine = session_of(&ctx.store, &tenant, &alice).await;
        let theirs = session_of(&ctx.store, &tenant, &eve).await;
        let (my_item, _) = ctx.store.inbox().park(&tenant, &prompt(&mine.id, &alice)).await.unwrap();
        let (their_item, _) = ctx.store.inbox().park(&tenant, &prompt(&theirs.id, &eve)).await.unwrap();

        let as_user = |id: &str| {
            let (store, tenant, id) = (ctx.store.clone(), tenant.clone(), UserId::from(id));
            async move { Sight::of(&store.tenants().get_user(&tenant, &id).await.unwrap().unwrap()) }
        };
        let alice_sees = as_user("alice").await;
        let sessions = ctx.store.sessions().list_visible(&tenant, &alice_sees, 100).await.unwrap();
        assert_eq!(sessions.iter().map(|s| &s.id).collect::<Vec<_>>(), [&mine.id]);
        let filter = InboxFilter { owner: alice_sees.owner().cloned(), ..InboxFilter::default() };
        let items = ctx.store.inbox().list(&tenant, &filter, 100).await.unwrap();
        assert_eq!(items.iter().map(|i| &i.id).collect::<Vec<_>>(), [&my_item.id]);

        let bob_sees = as_user("bob").await;
        let sessions = ctx.store.sessions().list_visible(&tenant, &bob_sees, 100).await.unwrap();
        assert!(sessions.iter().any(|s| s.id == mine.id) && sessions.iter().any(|s| s.id == theirs.id));
        let filter = InboxFilter { owner: bob_sees.owner().cloned(), ..InboxFilter::default() };
        let items = ctx.store.inbox().list(&tenant, &filter, 100).await.unwrap();
        assert_eq!(items.iter().map(|i| &i.id).collect::<Vec<_>>(), [&my_item.id, &their_item.id]);
    }
}
