//! Tenants and people, memories, audit and card ids.

use workmate_protocol::UserId;
use workmate_store::{CardMessage, MemoryScope, NewAuditRecord, NewMemory, NewUser, Role};

use crate::support::tenant_with_session;

backend_matrix! {
    async fn users_and_platform_identities(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "people").await;
        let tenants = ctx.store.tenants();
        let mut alice = NewUser { id: UserId::from("u_alice"), display_name: "Alice".into(), email: None, role: Role::Member, sso_subject: None };
        tenants.upsert_user(&tenant, &alice).await.unwrap();
        alice.role = Role::Approver;
        alice.email = Some("alice@example.com".into());
        let stored = tenants.upsert_user(&tenant, &alice).await.unwrap();
        assert_eq!(stored.role, Role::Approver);
        assert_eq!(stored.email.as_deref(), Some("alice@example.com"));
        let approvers = tenants.users_with_role(&tenant, Role::Approver).await.unwrap();
        assert_eq!(approvers.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(), ["u_alice"]);
        assert!(tenants.users_with_role(&tenant, Role::Admin).await.unwrap().is_empty());

        let bound = tenants.bind_platform_identity(&tenant, "slack", "U012AB", &alice.id).await.unwrap();
        assert_eq!(bound, alice.id);
        let rebound = tenants.bind_platform_identity(&tenant, "slack", "U012AB", &UserId::from("u_other")).await.unwrap();
        assert_eq!(rebound, alice.id, "the first binding stands");
        assert_eq!(tenants.user_for_platform_identity(&tenant, "feishu", "U012AB").await.unwrap(), None);

        tenants.set_settings(&tenant, &serde_json::json!({"separation_of_duties": true})).await.unwrap();
        let t = tenants.get(&tenant).await.unwrap().unwrap();
        assert_eq!(t.settings["separation_of_duties"], true);
        assert_eq!(tenants.ensure(&tenant, "renamed").await.unwrap().name, "Acme", "ensure never overwrites");
    }

    async fn a_platform_identity_resolves_to_its_user_and_follows_user_writes(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "people").await;
        let tenants = ctx.store.tenants();
        let mut bob = NewUser { id: UserId::from("u_bob"), display_name: "Bob".into(), email: None, role: Role::Admin, sso_subject: None };
        tenants.upsert_user(&tenant, &bob).await.unwrap();
        let admin = NewUser { id: UserId::from("u_admin"), display_name: "Admin".into(), email: None, role: Role::Admin, sso_subject: None };
        tenants.upsert_user(&tenant, &admin).await.unwrap();
        assert_eq!(tenants.user_by_platform_identity(&tenant, "slack", "UBOB").await.unwrap(), None, "not bound yet");
        tenants.bind_platform_identity(&tenant, "slack", "UBOB", &bob.id).await.unwrap();
        let found = tenants.user_by_platform_identity(&tenant, "slack", "UBOB").await.unwrap().unwrap();
        assert_eq!((found.id.as_str(), found.display_name.as_str(), found.role), ("u_bob", "Bob", Role::Admin));
        // Served again (from the cache), then changed: the next read sees each change.
        assert_eq!(tenants.user_by_platform_identity(&tenant, "slack", "UBOB").await.unwrap().unwrap(), found);
        bob.display_name = "Robert".into();
        tenants.upsert_user(&tenant, &bob).await.unwrap();
        let renamed = tenants.user_by_platform_identity(&tenant, "slack", "UBOB").await.unwrap().unwrap();
        assert_eq!(renamed.display_name, "Robert");
        tenants.change_role(&tenant, &bob.id, Role::Member).await.unwrap();
        let demoted = tenants.user_by_platform_identity(&tenant, "slack", "UBOB").await.unwrap().unwrap();
        assert_eq!(demoted.role, Role::Member, "a demotion is seen at once");
        assert_eq!(tenants.user_by_platform_identity(&tenant, "feishu", "UBOB").await.unwrap(), None, "another platform's account");
        let (other, _) = tenant_with_session(&ctx.store, "people").await;
        assert_eq!(tenants.user_by_platform_identity(&other, "slack", "UBOB").await.unwrap(), None, "another tenant's account");
    }

    async fn memories_round_trip(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "memory").await;
        let memories = ctx.store.memories();
        let saved = memories.add(&tenant, &NewMemory { scope: MemoryScope::Global, owner: Some(UserId::from("u_alice")), workspace: None, key: None, content: "Prefers Chinese summaries".into(), summary: None }).await.unwrap();
        assert_eq!(memories.get(&tenant, &saved.id).await.unwrap().as_ref(), Some(&saved));
        assert!(memories.update(&tenant, &saved.id, "Prefers English", Some("language")).await.unwrap());
        let updated = memories.get(&tenant, &saved.id).await.unwrap().unwrap();
        assert_eq!((updated.content.as_str(), updated.summary.as_deref()), ("Prefers English", Some("language")));
        assert_eq!(memories.list(&tenant).await.unwrap().len(), 1);
        assert!(memories.delete(&tenant, &saved.id).await.unwrap());
        assert!(!memories.delete(&tenant, &saved.id).await.unwrap());
        assert!(!memories.update(&tenant, &saved.id, "gone", None).await.unwrap());
    }

    async fn concurrent_settings_changes_are_all_kept(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "settings").await;
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..8 {
            let (store, tenant) = (ctx.store.clone(), tenant.clone());
            tasks.spawn(async move {
                let set = |current: &serde_json::Value| -> Result<serde_json::Value, String> {
                    let mut next = current.clone();
                    next[format!("key_{i}")] = serde_json::json!(i);
                    Ok(next)
                };
                store.tenants().update_settings(&tenant, set).await.unwrap().unwrap();
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
        let settings = ctx.store.tenants().get(&tenant).await.unwrap().unwrap().settings;
        for i in 0..8 {
            assert_eq!(settings[format!("key_{i}")], i, "{settings}");
        }
        let refused = ctx.store.tenants().update_settings(&tenant, |_| Err::<serde_json::Value, _>("no")).await.unwrap();
        assert_eq!(refused, Err("no"));
    }

    async fn audit_records_newest_first(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "audit").await;
        for stage in ["proposed", "approval_requested", "approval_resolved"] {
            ctx.store.audit().append(&tenant, &NewAuditRecord { session_id: Some(session.id.clone()), actor: Some("u_alice".into()), stage: stage.into(), tool: Some("run_shell".into()), status: None, detail: serde_json::json!({"command": "ls"}) }).await.unwrap();
        }
        let recent = ctx.store.audit().recent(&tenant, 2).await.unwrap();
        assert_eq!(recent.iter().map(|r| r.stage.as_str()).collect::<Vec<_>>(), vec!["approval_resolved", "approval_requested"]);
        assert_eq!(recent[0].detail["command"], "ls");
    }

    async fn card_versions_only_grow(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "cards").await;
        let cards = ctx.store.cards();
        let card = CardMessage { session_id: session.id.clone(), card_key: "turn:1".into(), platform: "feishu".into(), chat_id: "oc_1".into(), platform_message_id: "om_1".into(), version: 1, updated_at_ms: 0, confirmed: true };
        cards.record(&tenant, &card).await.unwrap();
        assert_eq!(cards.next_version(&tenant, &session.id, "turn:1", "feishu").await.unwrap(), 2);
        assert_eq!(cards.next_version(&tenant, &session.id, "turn:1", "feishu").await.unwrap(), 3);
        let stored = cards.get(&tenant, &session.id, "turn:1", "feishu").await.unwrap().unwrap();
        assert_eq!((stored.platform_message_id.as_str(), stored.version), ("om_1", 3));
        assert!(cards.next_version(&tenant, &session.id, "turn:2", "feishu").await.is_err());
        // Recording again moves the card and keeps its version.
        let moved = CardMessage { chat_id: "oc_2".into(), platform_message_id: "om_2".into(), version: 0, ..card };
        cards.record(&tenant, &moved).await.unwrap();
        let stored = cards.get(&tenant, &session.id, "turn:1", "feishu").await.unwrap().unwrap();
        assert_eq!((stored.chat_id.as_str(), stored.platform_message_id.as_str(), stored.version), ("oc_2", "om_2", 3));
        assert_eq!(cards.next_version(&tenant, &session.id, "turn:1", "feishu").await.unwrap(), 4);
    }

    async fn a_shared_value_is_replaced_read_until_it_expires_and_purged(ctx: Ctx) {
        let values = ctx.store.shared_values();
        values.put("wecom:stream:s1", "first", 1_000).await.unwrap();
        values.put("wecom:stream:s1", "second", 1_000).await.unwrap();
        values.put("wecom:stream:s2", "other", 5_000).await.unwrap();
        assert_eq!(values.get("wecom:stream:s1").await.unwrap().as_deref(), Some("second"));
        assert_eq!(values.get("missing").await.unwrap(), None);
        ctx.clock.advance_ms(1_000);
        assert_eq!(values.get("wecom:stream:s1").await.unwrap(), None, "expired");
        assert_eq!(values.purge_expired(100).await.unwrap(), 1);
        assert_eq!(values.get("wecom:stream:s2").await.unwrap().as_deref(), Some("other"));
    }

    async fn a_card_post_is_announced_then_confirmed(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "cards").await;
        let cards = ctx.store.cards();
        let get = || cards.get(&tenant, &session.id, "turn:9", "dingtalk");
        let announced = CardMessage { session_id: session.id.clone(), card_key: "turn:9".into(), platform: "dingtalk".into(), chat_id: "cid1".into(), platform_message_id: "reserved-1".into(), version: 0, updated_at_ms: 0, confirmed: false };
        cards.intend(&tenant, &announced).await.unwrap();
        let stored = get().await.unwrap().unwrap();
        assert_eq!((stored.platform_message_id.as_str(), stored.confirmed), ("reserved-1", false));
        // A second announcement changes nothing; the post confirms it.
        cards.intend(&tenant, &CardMessage { platform_message_id: "reserved-2".into(), ..announced.clone() }).await.unwrap();
        assert_eq!(get().await.unwrap().unwrap().platform_message_id, "reserved-1");
        cards.record(&tenant, &CardMessage { confirmed: true, ..announced.clone() }).await.unwrap();
        assert!(get().await.unwrap().unwrap().confirmed);
        // Announcing a card already posted leaves it posted.
        cards.intend(&tenant, &announced).await.unwrap();
        assert!(get().await.unwrap().unwrap().confirmed);
    }
}

backend_matrix! {
    async fn session_grants_are_kept(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "grants").await;
        assert_eq!(session.grants, serde_json::json!({}));
        let grants = serde_json::json!({"tools": ["write_file"], "commands": ["git push"], "readonly": true});
        let grant = |tenant: &workmate_protocol::TenantId| {
            let mut step = workmate_store::StepWrite::new(tenant.clone(), session.id.clone(), None);
            step.change.grants = Some(grants.clone());
            step
        };
        assert!(crate::support::write_steps(&ctx.store, vec![grant(&tenant)]).await[0].is_ok());
        let again = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(again.grants, grants);
        let (other, _) = tenant_with_session(&ctx.store, "grants").await;
        assert!(crate::support::write_steps(&ctx.store, vec![grant(&other)]).await[0].is_err(), "another tenant cannot grant");
    }
}
