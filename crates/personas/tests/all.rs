//! Personas and skills over a real store: installing from a folder and from a git repository,
//! the consent gate, re-installs that keep or lose consent, and the skills a session sees.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use workmate_personas::{
    CONSENT_STAGE, Error, InstallPolicy, InstallSource, PersonaState, Personas, Skill, SkillScope,
    Skills, catalog,
};
use workmate_protocol::{Surface, TenantId, UserId};
use workmate_store::{AuditQuery, ConnectOptions, Store};

const MANIFEST: &str = "---\nid: oncall\nname: On-call helper\nversion: 2\ntools: [files, web]\nscheduling: false\nconnectors: [pagerduty]\nmodel: scripted:oncall\nskills: [handover]\n---\nYou keep the on-call rotation calm.\n";

async fn store(dir: &Path) -> Store {
    let url = format!("sqlite://{}", dir.join("test.db").display());
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store
}

/// Installing as an operator who allows bundles from `root` (`[personas] folder_roots`).
fn roots(root: &Path) -> InstallPolicy {
    InstallPolicy {
        folder_roots: vec![root.to_owned()],
        ..InstallPolicy::default()
    }
}

fn write_bundle(dir: &Path, manifest: &str) {
    std::fs::create_dir_all(dir.join("skills/handover")).unwrap();
    std::fs::create_dir_all(dir.join("skills/unused")).unwrap();
    std::fs::write(dir.join("manifest.md"), manifest).unwrap();
    std::fs::write(
        dir.join("skills/handover/SKILL.md"),
        "---\ndescription: Hand the pager over at the end of a shift\n---\n1. Summarise open incidents.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("skills/unused/SKILL.md"),
        "---\ndescription: Not in the manifest's list\n---\nNever seen.\n",
    )
    .unwrap();
}

#[tokio::test]
async fn an_installed_persona_waits_for_consent_then_works() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let tenant = TenantId::from("acme");
    store.tenants().ensure(&tenant, "Acme").await.unwrap();
    let personas = Personas::new(store.clone()).with_install_policy(roots(dir.path()));
    let admin = UserId::from("u_admin");
    let bundle = dir.path().join("bundle");
    write_bundle(&bundle, MANIFEST);

    let summary = personas
        .install(&tenant, &InstallSource::Dir(bundle.clone()), &admin)
        .await
        .unwrap();
    assert!(summary.needs_consent);
    assert_eq!(summary.tools, ["files", "web"]);
    assert_eq!(summary.risk, ["network", "read", "write_local"]);
    assert_eq!(summary.skills, ["handover"]);
    assert_eq!(summary.replaces, None);
    assert_eq!(
        summary.capabilities,
        [
            "connector:pagerduty",
            "model:scripted:oncall",
            "tool:files",
            "tool:web"
        ]
    );

    // Pending: nobody can choose it, and the refusal says what an admin does.
    let refused = personas
        .usable(&tenant, "oncall")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("waiting for an admin's consent"),
        "{refused}"
    );
    assert!(
        refused.contains("/workmate persona consent oncall"),
        "{refused}"
    );
    let channel = personas
        .set_channel_default(&tenant, Surface::Slack, "C1", "oncall", &admin)
        .await;
    assert!(matches!(channel, Err(Error::Refused(_))));

    let entry = personas
        .set_enabled(&tenant, "oncall", true, &admin)
        .await
        .unwrap();
    assert_eq!(entry.state, PersonaState::Enabled);
    let persona = personas.usable(&tenant, "oncall").await.unwrap();
    assert_eq!(persona.instructions, "You keep the on-call rotation calm.");
    let audit = store
        .audit()
        .list(&tenant, &AuditQuery::default(), 50)
        .await
        .unwrap();
    let consent = audit
        .iter()
        .find(|r| r.stage == CONSENT_STAGE)
        .expect("consent audited");
    assert_eq!(consent.actor.as_deref(), Some("u_admin"));
    assert_eq!(consent.detail["persona"], "oncall");
    assert_eq!(consent.status.as_deref(), Some("enabled"));

    // Re-installing the same capabilities keeps the consent; asking for more loses it.
    let again = personas
        .install(&tenant, &InstallSource::Dir(bundle.clone()), &admin)
        .await
        .unwrap();
    assert!(!again.needs_consent);
    assert_eq!(again.replaces.as_deref(), Some("2"));
    write_bundle(
        &bundle,
        &MANIFEST.replace("tools: [files, web]", "tools: [files, web, shell]"),
    );
    let grown = personas
        .install(&tenant, &InstallSource::Dir(bundle), &admin)
        .await
        .unwrap();
    assert!(grown.needs_consent);
    assert!(personas.usable(&tenant, "oncall").await.is_err());
    // A live session keeps resolving it; unknown ids resolve to the default.
    assert_eq!(
        personas.resolve(&tenant, "oncall").await.unwrap().id,
        "oncall"
    );
    assert_eq!(
        personas.resolve(&tenant, "nobody").await.unwrap().id,
        "cowork"
    );

    let listed: Vec<_> = personas
        .list(&tenant)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.id, e.state))
        .collect();
    assert_eq!(
        listed.last().unwrap(),
        &("oncall".to_owned(), PersonaState::Pending)
    );
    assert!(listed.iter().any(|(id, _)| id == "release-manager"));
}

#[tokio::test]
async fn bad_bundles_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let tenant = TenantId::from("acme");
    let personas = Personas::new(store).with_install_policy(roots(dir.path()));
    let admin = UserId::from("u_admin");
    let install = |path: &Path| InstallSource::Dir(path.to_owned());

    let builtin = dir.path().join("builtin");
    write_bundle(&builtin, &MANIFEST.replace("id: oncall", "id: cowork"));
    let error = personas
        .install(&tenant, &install(&builtin), &admin)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("built-in persona"), "{error}");

    let all = dir.path().join("all");
    write_bundle(&all, &MANIFEST.replace("tools: [files, web]", "tools: all"));
    let error = personas
        .install(&tenant, &install(&all), &admin)
        .await
        .unwrap_err();
    assert!(
        error.to_string().starts_with("manifest.md: field `tools`"),
        "{error}"
    );

    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let error = personas
        .install(&tenant, &install(&empty), &admin)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("holds no persona"), "{error}");

    #[cfg(unix)]
    {
        let linked = dir.path().join("linked");
        std::fs::create_dir_all(&linked).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", linked.join("manifest.md")).unwrap();
        let error = personas
            .install(&tenant, &install(&linked), &admin)
            .await
            .unwrap_err();
        assert!(error.to_string().contains("holds no persona"), "{error}");
    }

    let error = personas
        .install(
            &tenant,
            &InstallSource::Git("ext::sh -c evil".into()),
            &admin,
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not a git URL"), "{error}");
}

#[tokio::test]
async fn a_persona_installs_from_a_git_repository() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let tenant = TenantId::from("acme");
    let repo = dir.path().join("repo");
    write_bundle(&repo, MANIFEST);
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "persona"]);

    let personas = Personas::new(store).with_install_policy(roots(dir.path()));
    let url = format!("file://{}", repo.display());
    let summary = personas
        .install(
            &tenant,
            &InstallSource::Git(url.clone()),
            &UserId::from("u_admin"),
        )
        .await
        .unwrap();
    assert_eq!(summary.id, "oncall");
    assert_eq!(summary.source, url);
    let missing = personas
        .install(
            &tenant,
            &InstallSource::Git(format!("file://{}/nothing", dir.path().display())),
            &UserId::from("u_admin"),
        )
        .await
        .unwrap_err();
    assert!(
        missing.to_string().contains("/nothing: No such file"),
        "{missing}"
    );
}

#[tokio::test]
async fn a_session_sees_tenant_bundle_and_channel_skills() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let tenant = TenantId::from("acme");
    let admin = UserId::from("u_admin");
    let personas = Personas::new(store.clone()).with_install_policy(roots(dir.path()));
    let bundle = dir.path().join("bundle");
    write_bundle(&bundle, MANIFEST);
    personas
        .install(&tenant, &InstallSource::Dir(bundle), &admin)
        .await
        .unwrap();
    let persona = personas.resolve(&tenant, "oncall").await.unwrap();

    let skills = Skills::new(store);
    let skill = |name: &str, says: &str| Skill::new(name, says, "Steps.", vec![]).unwrap();
    for (scope, channel, name, says) in [
        (SkillScope::Tenant, "slack:C1", "triage", "Tenant triage"),
        (SkillScope::Channel, "slack:C1", "triage", "Channel triage"),
        (SkillScope::Channel, "slack:C2", "other", "Elsewhere"),
    ] {
        skills
            .save(&tenant, scope, channel, &skill(name, says), &admin)
            .await
            .unwrap();
    }
    let refused = skills
        .save(&tenant, SkillScope::Channel, "", &skill("x", "y"), &admin)
        .await;
    assert!(matches!(refused, Err(Error::Refused(_))));

    let seen = skills.visible(&tenant, &persona, "slack:C1").await.unwrap();
    let names: Vec<_> = seen
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("handover", "Hand the pager over at the end of a shift"),
            ("triage", "Channel triage")
        ]
    );
    let text = catalog(&seen).unwrap();
    assert!(text.contains("- handover: Hand the pager over"));
    let cowork = personas.resolve(&tenant, "cowork").await.unwrap();
    let seen = skills.visible(&tenant, &cowork, "slack:C3").await.unwrap();
    assert_eq!(seen.len(), 1, "the bundle's skills belong to its persona");
}

#[tokio::test]
async fn installs_reach_only_what_the_operator_allows() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let tenant = TenantId::from("acme");
    store.tenants().ensure(&tenant, "Acme").await.unwrap();
    let admin = UserId::from("u_admin");
    let allowed = dir.path().join("bundles");
    let bundle = allowed.join("oncall");
    write_bundle(&bundle, MANIFEST);
    let outside = tempfile::tempdir().unwrap();
    write_bundle(outside.path(), MANIFEST);
    let personas = Personas::new(store).with_install_policy(roots(&allowed));

    let outside_url = format!("file://{}", outside.path().display());
    for source in [
        InstallSource::Dir(outside.path().to_owned()),
        InstallSource::Dir(allowed.join("../..")),
        InstallSource::Dir("/etc".into()),
        InstallSource::Git(outside_url),
        InstallSource::Git("https://127.0.0.1/acme/personas.git".into()),
        InstallSource::Git("https://169.254.169.254/latest/".into()),
        InstallSource::Git("https://localhost/acme/personas.git".into()),
        InstallSource::Git("git@internal.example:acme/personas.git".into()),
    ] {
        let error = personas
            .install(&tenant, &source, &admin)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("folder_roots") || error.contains("refusing") || error.contains("ssh"),
            "{source:?}: {error}"
        );
    }
    // Under the operator's root it installs.
    personas
        .install(&tenant, &InstallSource::Dir(bundle), &admin)
        .await
        .unwrap();
}
