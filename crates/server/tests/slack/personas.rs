//! Personas and skills over Slack's wire: an installed persona waits for an admin's consent
//! (typed as `/workmate persona consent`), becomes the channel's persona, answers a mention with
//! its instructions, and loads a skill from the catalog on demand; `/workmate skills` lists it.

use workmate_personas::{InstallSource, Personas, Skill, SkillScope, Skills};

use super::commands::{chat_command_audits, slash};
use super::*;

const SCRIPT: &str = r###"{"conversations": [{"when": "*", "turns": [
    {"requires_system": "You keep the on-call rotation calm.", "tool_calls": [{"name": "load_skill", "arguments": {"name": "handover"}}]},
    {"requires_system": "- handover: Hand the pager over", "text": "Handover done: step one was listing incidents."}]}]}"###;

const MANIFEST: &str = "---\nid: oncall\nname: On-call helper\ntools: [files]\n---\nYou keep the on-call rotation calm.\n";

#[tokio::test]
async fn a_persona_waits_for_consent_then_answers_the_channel_and_loads_a_skill() {
    let app = slack_app_admins(SCRIPT, &["U9"]).await;
    let tenant = tenant_of("T1");
    // Both people exist before the persona is installed.
    slash(&app, "U1", "whoami").await;
    slash(&app, "U9", "whoami").await;
    let bundle = app._dir.path().join("oncall");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(bundle.join("manifest.md"), MANIFEST).unwrap();
    Personas::new(app.store.clone())
        .with_install_policy(workmate_personas::InstallPolicy {
            folder_roots: vec![app._dir.path().to_owned()],
            ..Default::default()
        })
        .install(&tenant, &InstallSource::Dir(bundle), &"slack-U9".into())
        .await
        .unwrap();
    let skill = Skill::new(
        "handover",
        "Hand the pager over",
        "1. List open incidents.",
        vec![],
    )
    .unwrap();
    Skills::new(app.store.clone())
        .save(
            &tenant,
            SkillScope::Channel,
            "slack:C1",
            &skill,
            &"slack-U9".into(),
        )
        .await
        .unwrap();

    let listed = slash(&app, "U1", "persona").await;
    assert!(listed.contains("On-call helper `oncall`"), "{listed}");
    assert!(
        listed.contains("waiting for an admin's consent to tool:automation, tool:files, tool:wake"),
        "{listed}"
    );
    let refused = slash(&app, "U9", "persona default oncall").await;
    assert!(
        refused.contains("waiting for an admin's consent"),
        "{refused}"
    );
    let member = slash(&app, "U1", "persona consent oncall").await;
    assert!(member.contains("Only admins consent"), "{member}");

    let consented = slash(&app, "U9", "persona consent oncall").await;
    assert!(
        consented.contains("is enabled: you consented to"),
        "{consented}"
    );
    let chosen = slash(&app, "U9", "persona default oncall").await;
    assert!(
        chosen.contains("New threads in this channel now start as On-call helper"),
        "{chosen}"
    );
    let skills = slash(&app, "U1", "skills").await;
    assert!(
        skills.contains("• `handover`: Hand the pager over"),
        "{skills}"
    );
    let audits = app
        .store
        .audit()
        .list(
            &tenant,
            &workmate_store::AuditQuery {
                stage: Some("persona_consent".into()),
                ..Default::default()
            },
            10,
        )
        .await
        .unwrap();
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0].actor.as_deref(), Some("slack-U9"));
    assert!(chat_command_audits(&app.store).await.len() >= 6);

    signed(&app, "events", &mention("Ev1"), SECRET).await;
    let session = app.session_of(THREAD).await;
    assert_eq!(session.persona, "oncall");
    wait_shown(&app.fake, "the answer after the skill", |updates| {
        updates
            .iter()
            .any(|u| u.to_string().contains("Handover done"))
    })
    .await;

    // In the thread, its owner switches it back to the default persona.
    app.in_thread_until(
        "Ev2",
        "1700000000.0200",
        "/workmate persona cowork",
        &session.id,
        |r| r.persona == "cowork",
    )
    .await;
    app.chat.shutdown(Duration::from_secs(2)).await;
}
