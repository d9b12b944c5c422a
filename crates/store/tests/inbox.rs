//! Parking is idempotent per tool call; answers are final; filters combine.

use workmate_protocol::{
    ApprovalChoice, EventKind, InboxItemKind, Resolution, Surface, UserId, Visibility,
};
use workmate_store::{
    Answer, InboxFilter, InboxItemState, NewInboxItem, NewUser, ResolveOutcome, Role,
};

use crate::support::tenant_with_session;

fn prompt(
    session: &workmate_protocol::SessionId,
    call: Option<&str>,
    visibility: Visibility,
) -> NewInboxItem {
    NewInboxItem {
        session_id: session.clone(),
        tool_call_id: call.map(Into::into),
        kind: InboxItemKind::Approval,
        title: "Run `write_file`?".into(),
        body: "path: notes.md".into(),
        inbox: "default".into(),
        visibility,
        requested_by: Some(UserId::from("u_alice")),
        data: serde_json::json!({"tool": "write_file", "arguments": {"path": "notes.md"}}),
    }
}

backend_matrix! {
    async fn parking_a_tool_call_twice_returns_the_first_item(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "inbox").await;
        let inbox = ctx.store.inbox();
        let (first, created) = inbox.park(&tenant, &prompt(&session.id, Some("call_1"), Visibility::Inline)).await.unwrap();
        assert!(created);
        let (again, created) = inbox.park(&tenant, &prompt(&session.id, Some("call_1"), Visibility::Inline)).await.unwrap();
        assert!(!created);
        assert_eq!(again, first);

        let once = Resolution::Approval { choice: ApprovalChoice::Once };
        let alice = UserId::from("u_alice");
        let ResolveOutcome::Resolved(resolved) = inbox.resolve(&tenant, &first.id, &once, &alice, Surface::Slack).await.unwrap() else {
            panic!("a pending item resolves");
        };
        assert_eq!(resolved.state, InboxItemState::Resolved);
        assert_eq!(resolved.resolution, Some(once.clone()));
        assert_eq!(resolved.resolved_by, Some(alice.clone()));
        assert_eq!(resolved.resolved_via, Some(Surface::Slack));
        assert_eq!(resolved.resolved_at_ms, Some(workmate_store::Clock::now_ms(&*ctx.clock)));

        // Durable resume parks the same call again: it gets the resolved item, not a new prompt.
        let (after_restart, created) = inbox.park(&tenant, &prompt(&session.id, Some("call_1"), Visibility::Inline)).await.unwrap();
        assert!(!created);
        assert_eq!(after_restart.resolution, Some(once));

        // Without a tool call every park is a new item.
        let (n1, _) = inbox.park(&tenant, &prompt(&session.id, None, Visibility::Inbox)).await.unwrap();
        let (n2, _) = inbox.park(&tenant, &prompt(&session.id, None, Visibility::Inbox)).await.unwrap();
        assert_ne!(n1.id, n2.id);
    }

    async fn later_answers_do_not_overwrite_the_first(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "inbox").await;
        let inbox = ctx.store.inbox();
        let (item, _) = inbox.park(&tenant, &prompt(&session.id, Some("call_9"), Visibility::Inline)).await.unwrap();
        let deny = Resolution::Approval { choice: ApprovalChoice::Deny };
        let allow = Resolution::Approval { choice: ApprovalChoice::Once };
        inbox.resolve(&tenant, &item.id, &deny, &UserId::from("u_bob"), Surface::Feishu).await.unwrap();
        let ResolveOutcome::AlreadyResolved(seen) = inbox.resolve(&tenant, &item.id, &allow, &UserId::from("u_carol"), Surface::Http).await.unwrap() else {
            panic!("the second answer must lose");
        };
        assert_eq!(seen.resolution, Some(deny));
        assert_eq!(seen.resolved_by, Some(UserId::from("u_bob")));
        let unknown = workmate_protocol::InboxItemId::new();
        assert_eq!(inbox.resolve(&tenant, &unknown, &allow, &UserId::from("u_bob"), Surface::Http).await.unwrap(), ResolveOutcome::NotFound);
    }

    async fn the_winning_answer_and_its_event_commit_together(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "inbox").await;
        let inbox = ctx.store.inbox();
        let (item, _) = inbox.park(&tenant, &prompt(&session.id, Some("call_7"), Visibility::Inline)).await.unwrap();
        let once = Resolution::Approval { choice: ApprovalChoice::Once };
        let bob = UserId::from("u_bob");
        let answer = Answer { resolution: &once, by: &bob, via: Surface::Slack };
        let event = |_: &workmate_store::InboxItem| Some(EventKind::Compacting);
        let (outcome, recorded) = inbox.resolve_and_record(&tenant, &item.id, &answer, event).await.unwrap();
        assert!(matches!(outcome, ResolveOutcome::Resolved(_)));
        let recorded = recorded.expect("the winner's event is stored");
        let stored = ctx.store.events().list_after(&tenant, &session.id, 0, 10).await.unwrap();
        assert_eq!(stored.last().map(|e| e.seq), Some(recorded.seq));

        let (outcome, recorded) = inbox.resolve_and_record(&tenant, &item.id, &answer, event).await.unwrap();
        assert!(matches!(outcome, ResolveOutcome::AlreadyResolved(_)));
        assert!(recorded.is_none(), "a losing answer records nothing");
        assert_eq!(ctx.store.events().list_after(&tenant, &session.id, 0, 10).await.unwrap().len(), stored.len());
    }

    async fn inbox_filters_combine(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "inbox").await;
        let other = crate::support::session_at(&ctx.store, &tenant, "C02", "").await;
        let inbox = ctx.store.inbox();
        let (inline, _) = inbox.park(&tenant, &prompt(&session.id, Some("c1"), Visibility::Inline)).await.unwrap();
        ctx.clock.advance_ms(1);
        let (parked, _) = inbox.park(&tenant, &prompt(&session.id, Some("c2"), Visibility::Inbox)).await.unwrap();
        ctx.clock.advance_ms(1);
        let (elsewhere, _) = inbox.park(&tenant, &prompt(&other.id, Some("c1"), Visibility::Inbox)).await.unwrap();
        let answer = Resolution::Answer { text: "ok".into() };
        inbox.resolve(&tenant, &parked.id, &answer, &UserId::from("u_alice"), Surface::Http).await.unwrap();

        let ids = |items: Vec<workmate_store::InboxItem>| items.into_iter().map(|i| i.id).collect::<Vec<_>>();
        let all = inbox.list(&tenant, &InboxFilter::default(), 10).await.unwrap();
        assert_eq!(ids(all), vec![inline.id.clone(), parked.id.clone(), elsewhere.id.clone()], "oldest first");
        let pending = InboxFilter { state: Some(InboxItemState::Pending), ..Default::default() };
        assert_eq!(ids(inbox.list(&tenant, &pending, 10).await.unwrap()), vec![inline.id.clone(), elsewhere.id.clone()]);
        let cross_session = InboxFilter { state: Some(InboxItemState::Pending), visibility: Some(Visibility::Inbox), ..Default::default() };
        assert_eq!(ids(inbox.list(&tenant, &cross_session, 10).await.unwrap()), vec![elsewhere.id.clone()]);
        let one_session = InboxFilter { session: Some(session.id.clone()), ..Default::default() };
        assert_eq!(ids(inbox.list(&tenant, &one_session, 10).await.unwrap()), vec![inline.id, parked.id]);
        assert_eq!(inbox.list(&tenant, &InboxFilter::default(), 1).await.unwrap().len(), 1);
    }

    async fn a_prompts_deciders_are_its_owner_and_the_tenants_approvers_and_admins_on_that_platform(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "deciders").await;
        let (other, _) = tenant_with_session(&ctx.store, "deciders-other").await;
        let tenants = ctx.store.tenants();
        let person = |id: &str, role: Role| NewUser {
            id: UserId::from(id),
            display_name: id.to_owned(),
            email: None,
            role,
            sso_subject: None,
        };
        for (who, role, platform_id) in [
            ("u_alice", Role::Member, "staff_alice"),
            ("u_bob", Role::Member, "staff_bob"),
            ("u_carol", Role::Approver, "staff_carol"),
            ("u_dave", Role::Admin, "staff_dave"),
            ("u_erin", Role::Approver, "staff_erin"),
        ] {
            tenants.upsert_user(&tenant, &person(who, role)).await.unwrap();
            tenants.bind_platform_identity(&tenant, "dingtalk", platform_id, &UserId::from(who)).await.unwrap();
        }
        // Erin is deactivated; Carol also has a Slack account; another tenant's admin is not here.
        ctx.store.offboarding().deprovision(&tenant, &UserId::from("u_erin"), &UserId::from("u_dave")).await.unwrap();
        tenants.bind_platform_identity(&tenant, "slack", "U_CAROL", &UserId::from("u_carol")).await.unwrap();
        tenants.upsert_user(&other, &person("u_zed", Role::Admin)).await.unwrap();
        tenants.bind_platform_identity(&other, "dingtalk", "staff_zed", &UserId::from("u_zed")).await.unwrap();

        let (item, _) = ctx.store.inbox().park(&tenant, &prompt(&session.id, Some("call_d"), Visibility::Inline)).await.unwrap();
        let deciders = ctx.store.inbox().deciders_on("dingtalk", &item.id).await.unwrap();
        assert_eq!(deciders, vec!["staff_alice", "staff_carol", "staff_dave"], "the owner first, then approvers and admins");
        assert_eq!(ctx.store.inbox().deciders_on("slack", &item.id).await.unwrap(), vec!["U_CAROL"]);
        let unknown = workmate_protocol::InboxItemId::new();
        assert!(ctx.store.inbox().deciders_on("dingtalk", &unknown).await.unwrap().is_empty());
    }
}
