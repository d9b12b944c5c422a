//! Installed personas (re-install keeps or clears consent), channel defaults and skill stores.

use workmate_protocol::{Surface, TenantId, UserId};
use workmate_store::{NewPersona, PersonaState, SkillRecord, SkillScope};

fn persona(state: PersonaState, capabilities: &[&str]) -> NewPersona {
    NewPersona {
        id: "release-manager".into(),
        manifest: "---\nname: Release manager\n---\nShip it.".into(),
        source: "/bundles/release".into(),
        state,
        capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
        installed_by: UserId::from("u_admin"),
    }
}

fn skill(scope: SkillScope, key: &str, name: &str) -> SkillRecord {
    SkillRecord {
        scope,
        scope_key: key.into(),
        name: name.into(),
        description: format!("{name} from {key:?}"),
        instructions: "1. Do it.".into(),
        allowed_tools: vec!["shell".into()],
        created_by: Some(UserId::from("u_alice")),
        updated_at_ms: 0,
    }
}

backend_matrix! {
    async fn personas_install_consent_and_channel_defaults(ctx: Ctx) {
        let tenant = TenantId::from("personas");
        ctx.store.tenants().ensure(&tenant, "Acme").await.unwrap();
        let repo = ctx.store.personas();
        let admin = UserId::from("u_admin");

        let installed = repo.install(&tenant, &persona(PersonaState::Pending, &["tool:files"]), &[]).await.unwrap();
        assert_eq!(installed.state, PersonaState::Pending);
        assert_eq!(installed.consented_by, None);
        assert!(repo.set_state(&tenant, "release-manager", PersonaState::Enabled, &admin).await.unwrap());
        assert!(!repo.set_state(&tenant, "nobody", PersonaState::Enabled, &admin).await.unwrap());

        // The same capabilities again: the consent stands.
        let again = repo.install(&tenant, &persona(PersonaState::Enabled, &["tool:files"]), &[]).await.unwrap();
        assert_eq!(again.state, PersonaState::Enabled);
        assert_eq!(again.consented_by, Some(admin.clone()));

        // More capabilities: back to pending, the old consent is gone.
        let grown = repo.install(&tenant, &persona(PersonaState::Pending, &["tool:files", "tool:shell"]), &[]).await.unwrap();
        assert_eq!(grown.state, PersonaState::Pending);
        assert_eq!(grown.consented_by, None);
        assert_eq!(grown.capabilities, ["tool:files", "tool:shell"]);
        assert_eq!(repo.list(&tenant).await.unwrap().len(), 1);
        assert!(repo.list(&TenantId::from("other")).await.unwrap().is_empty());

        assert_eq!(repo.channel_default(&tenant, Surface::Slack, "C1").await.unwrap(), None);
        repo.set_channel_default(&tenant, Surface::Slack, "C1", "sales-analyst", &admin).await.unwrap();
        repo.set_channel_default(&tenant, Surface::Slack, "C1", "release-manager", &admin).await.unwrap();
        assert_eq!(repo.channel_default(&tenant, Surface::Slack, "C1").await.unwrap().as_deref(), Some("release-manager"));
        assert_eq!(repo.channel_default(&tenant, Surface::Feishu, "C1").await.unwrap(), None);
    }

    async fn skills_are_kept_per_store_and_replaced_by_name(ctx: Ctx) {
        let tenant = TenantId::from("skills");
        ctx.store.tenants().ensure(&tenant, "Acme").await.unwrap();
        let repo = ctx.store.skills();
        repo.put(&tenant, &skill(SkillScope::Channel, "slack:C1", "triage")).await.unwrap();
        repo.put(&tenant, &skill(SkillScope::Tenant, "", "triage")).await.unwrap();
        repo.put(&tenant, &skill(SkillScope::Persona, "release-manager", "notes")).await.unwrap();
        repo.put(&tenant, &skill(SkillScope::Channel, "slack:C2", "elsewhere")).await.unwrap();
        let mut changed = skill(SkillScope::Tenant, "", "triage");
        changed.instructions = "2. Do it better.".into();
        repo.put(&tenant, &changed).await.unwrap();

        let seen = repo.visible(&tenant, "release-manager", "slack:C1").await.unwrap();
        let names: Vec<_> = seen.iter().map(|s| (s.scope, s.name.as_str())).collect();
        assert_eq!(names, [(SkillScope::Tenant, "triage"), (SkillScope::Persona, "notes"), (SkillScope::Channel, "triage")]);
        assert_eq!(seen[0].instructions, "2. Do it better.");
        assert_eq!(seen[0].allowed_tools, ["shell"]);

        // Re-installing the persona replaces its bundle's skills, in the same transaction.
        let bundle = [skill(SkillScope::Persona, "ignored", "handbook")];
        ctx.store.personas().install(&tenant, &persona(PersonaState::Pending, &[]), &bundle).await.unwrap();
        let names: Vec<_> = repo.visible(&tenant, "release-manager", "slack:C9").await.unwrap().into_iter().map(|s| (s.scope, s.name)).collect();
        assert_eq!(names, [(SkillScope::Tenant, "triage".to_owned()), (SkillScope::Persona, "handbook".to_owned())]);
        assert!(repo.visible(&TenantId::from("other"), "release-manager", "slack:C1").await.unwrap().is_empty());
    }
}
