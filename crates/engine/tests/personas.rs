//! Personas in a turn: a pending persona cannot be switched to until an admin consents; then
//! every model call starts with its instructions and the skill catalog, it is offered only its
//! tool groups, and a call outside them is denied.

use serde_json::json;
use workmate_personas::{InstallSource, Personas, Skill, SkillScope, Skills};
use workmate_protocol::{Actor, Command, EventKind, Message, ToolStatus};

use crate::support::{Harness, Options, first_outcome, script};

const MANIFEST: &str = "---\nid: archivist\nname: Archivist\ntools: [files]\nscheduling: false\nmodel: scripted:archive\n---\nYou file everything in the archive, alphabetically.\n";

#[tokio::test]
async fn a_consented_persona_answers_with_its_instructions_and_its_tools_only() {
    let turns = script(json!([
        {"requires_system": "alphabetically", "tool_calls": [{"name": "remember", "arguments": {"content": "x", "scope": "global"}}]},
        {"requires_system": "- filing: How to file a record", "text": "Filed."}
    ]));
    let options = Options {
        allow_all: true,
        ..Options::default()
    };
    let mut h = Harness::with(&turns, options).await;
    let bundle = h.dir.join("archivist");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(bundle.join("manifest.md"), MANIFEST).unwrap();
    let personas =
        Personas::new(h.store.clone()).with_install_policy(workmate_personas::InstallPolicy {
            folder_roots: vec![h.dir.clone()],
            ..Default::default()
        });
    let admin = "u_admin".into();
    personas
        .install(&h.tenant, &InstallSource::Dir(bundle), &admin)
        .await
        .unwrap();
    let skill = Skill::new(
        "filing",
        "How to file a record",
        "1. Alphabetically.",
        vec![],
    )
    .unwrap();
    Skills::new(h.store.clone())
        .save(&h.tenant, SkillScope::Tenant, "", &skill, &admin)
        .await
        .unwrap();

    let switch = || Command::SetPersona {
        persona: "archivist".into(),
        actor: Actor::new("u_alice"),
    };
    let refused = h.command(switch()).await.unwrap_err().to_string();
    assert!(
        refused.contains("waiting for an admin's consent"),
        "{refused}"
    );

    personas
        .set_enabled(&h.tenant, "archivist", true, &admin)
        .await
        .unwrap();
    h.command(switch()).await.unwrap();
    let switched = h
        .events_until(|e| matches!(e.kind, EventKind::PersonaSwitched { .. }))
        .await;
    let Some(EventKind::PersonaSwitched {
        from,
        to,
        model,
        text,
    }) = switched.last().map(|e| e.kind.clone())
    else {
        panic!("no persona_switched event");
    };
    assert_eq!((from.as_str(), to.as_str()), ("cowork", "archivist"));
    assert_eq!(model.as_deref(), Some("scripted:archive"));
    assert!(text.starts_with("Persona switched to Archivist"), "{text}");

    h.say("file the minutes").await;
    let events = h.turn_events().await;
    let (status, reason) = first_outcome(&events);
    assert_eq!(status, ToolStatus::Denied);
    assert!(
        reason
            .unwrap()
            .contains("not among the tools of the archivist persona")
    );
    h.idle().await;
    let requests = h.model.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.model, "archive");
    let offered: Vec<_> = last.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        !offered.contains(&"remember") && !offered.contains(&"probe_schedule"),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"probe_read") && offered.contains(&"ask_user"),
        "{offered:?}"
    );
    let history = h.history().await;
    assert!(
        !history.iter().any(|m| matches!(m, Message::System { .. })),
        "the system message is never stored"
    );
    assert!(
        history
            .iter()
            .any(|m| matches!(m, Message::Assistant { content, .. } if content == "Filed."))
    );
}
