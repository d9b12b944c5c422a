//! Chat accounts bound to directory subjects, on every backend: binding, refusals, the one-time
//! link card, e-mail matching, and offboarding that reaches every bound account.

use workmate_protocol::{TenantId, UserId};
use workmate_store::{DirectoryFacts, NewUser, Role, Store};

async fn member(store: &Store, tenant: &str, id: &str, email: Option<&str>) -> TenantId {
    let tenant = TenantId::from(tenant);
    store
        .tenants()
        .ensure(&tenant, tenant.as_str())
        .await
        .unwrap();
    let user = NewUser {
        id: id.into(),
        display_name: id.into(),
        email: email.map(str::to_owned),
        role: Role::Member,
        sso_subject: None,
    };
    store.tenants().upsert_user(&tenant, &user).await.unwrap();
    tenant
}

fn facts(subject: &str, groups: &[&str], role: Option<Role>) -> DirectoryFacts {
    DirectoryFacts {
        subject: subject.into(),
        email: Some(format!("{subject}@acme.example")),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        role,
    }
}

backend_matrix! {
    async fn an_account_binds_once_and_keeps_its_subject(ctx: Ctx) {
        let slack = member(&ctx.store, "slack-T1", "slack-U1", None).await;
        let bindings = ctx.store.bindings();
        let ana = facts("ana", &["sre"], Some(Role::Approver));
        let (user, new) = bindings.bind(&slack, &"slack-U1".into(), &ana, "link").await.unwrap();
        assert!(new);
        assert_eq!(user.sso_subject.as_deref(), Some("ana"));
        assert_eq!(user.role, Role::Approver);
        assert_eq!(user.directory_groups, vec!["sre".to_owned()]);
        assert_eq!(user.email.as_deref(), Some("ana@acme.example"));
        // Again with the same subject: brought up to date, not a new binding; no role mapping
        // keeps the role.
        let (user, new) = bindings
            .bind(&slack, &"slack-U1".into(), &facts("ana", &[], None), "sign_in")
            .await
            .unwrap();
        assert!(!new);
        assert_eq!(user.role, Role::Approver);
        assert!(user.directory_groups.is_empty());
        // Another subject may not take the account over.
        let taken = bindings.bind(&slack, &"slack-U1".into(), &facts("mallory", &[], None), "link").await;
        let error = taken.unwrap_err().to_string();
        assert!(error.contains("already linked"), "{error}");
        let missing = bindings.bind(&slack, &"slack-U9".into(), &ana, "link").await;
        assert!(matches!(missing, Err(workmate_store::Error::NotFound { .. })));
        // One audit record: the new binding.
        let audit = ctx.store.audit().recent(&slack, 50).await.unwrap();
        let bound: Vec<_> = audit.iter().filter(|r| r.stage == "identity_bound").collect();
        assert_eq!(bound.len(), 1);
        assert_eq!(bound[0].detail["subject"], "ana");
    }

    async fn the_link_card_is_offered_once_and_email_finds_one_subject(ctx: Ctx) {
        let slack = member(&ctx.store, "slack-T1", "slack-U1", None).await;
        let bindings = ctx.store.bindings();
        let u1 = UserId::from("slack-U1");
        assert!(!bindings.link_offered(&slack, &u1).await.unwrap());
        assert!(bindings.offer_link(&slack, &u1).await.unwrap());
        assert!(!bindings.offer_link(&slack, &u1).await.unwrap());
        assert!(bindings.link_offered(&slack, &u1).await.unwrap());

        assert!(bindings.subject_with_email("ana@acme.example").await.unwrap().is_none());
        bindings.bind(&slack, &u1, &facts("ana", &[], None), "link").await.unwrap();
        let found = bindings.subject_with_email(" Ana@ACME.example ").await.unwrap().unwrap();
        assert_eq!(found.sso_subject.as_deref(), Some("ana"));
        // Two subjects with one address: ambiguous, no shortcut.
        let feishu = member(&ctx.store, "feishu-T2", "feishu-ou_2", None).await;
        let twin = DirectoryFacts { email: Some("ana@acme.example".into()), ..facts("ana2", &[], None) };
        bindings.bind(&feishu, &"feishu-ou_2".into(), &twin, "link").await.unwrap();
        assert!(bindings.subject_with_email("ana@acme.example").await.unwrap().is_none());
        assert_eq!(bindings.bound_to("ana").await.unwrap().len(), 1);
    }

    async fn offboarding_a_subject_deactivates_every_bound_account(ctx: Ctx) {
        let default = member(&ctx.store, "default", "sso:ana", None).await;
        let slack = member(&ctx.store, "slack-T1", "slack-U1", None).await;
        let feishu = member(&ctx.store, "feishu-T2", "feishu-ou_1", None).await;
        let other = member(&ctx.store, "slack-T1", "slack-U2", None).await;
        let bindings = ctx.store.bindings();
        let ana = facts("ana", &[], None);
        bindings.bind(&default, &"sso:ana".into(), &ana, "sign_in").await.unwrap();
        bindings.bind(&slack, &"slack-U1".into(), &ana, "link").await.unwrap();
        bindings.bind(&feishu, &"feishu-ou_1".into(), &ana, "link").await.unwrap();
        let done = ctx
            .store
            .offboarding()
            .deprovision(&default, &"sso:ana".into(), &"admin".into())
            .await
            .unwrap();
        assert_eq!(
            done.bound_accounts,
            vec![(feishu.clone(), "feishu-ou_1".into()), (slack.clone(), "slack-U1".into())]
        );
        for (tenant, user) in [(&default, "sso:ana"), (&slack, "slack-U1"), (&feishu, "feishu-ou_1")] {
            let stored = ctx.store.tenants().get_user(tenant, &user.into()).await.unwrap().unwrap();
            assert!(stored.is_disabled(), "{user}");
            let audit = ctx.store.audit().recent(tenant, 50).await.unwrap();
            assert!(audit.iter().any(|r| r.stage == "user_deprovisioned"), "{user}");
        }
        let bystander = ctx.store.tenants().get_user(&other, &"slack-U2".into()).await.unwrap().unwrap();
        assert!(!bystander.is_disabled());
        // A deactivated account cannot be linked again.
        let relink = bindings.bind(&slack, &"slack-U1".into(), &ana, "link").await;
        assert!(relink.unwrap_err().to_string().contains("deactivated"));
    }
}
