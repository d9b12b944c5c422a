//! Personas and skills over HTTP: an installed persona is pending and cannot be used until an
//! admin consents (audited); then a session with it answers with its instructions; a skill in
//! the catalog is loaded on demand and its instructions reach the model.

use axum::http::StatusCode;
use serde_json::json;
use workmate_personas::{Skill, SkillScope, Skills};

use crate::api::messages_once;
use crate::authority::{as_user, people_with_script};

/// The first turn checks the persona's instructions and the catalog reached the model, then
/// loads the skill; the second answers once the skill's steps are in the history.
const SCRIPT: &str = r###"{"conversations": [{"when": "*", "turns": [
    {"requires_system": "You keep the on-call rotation calm.", "tool_calls": [{"name": "load_skill", "arguments": {"name": "handover"}}]},
    {"requires_system": "- handover: Hand the pager over at the end of a shift", "text": "Handover done."}]}]}"###;

/// Alice says `text` in `session`.
async fn say(app: &crate::router::App, session: &str, text: &str) {
    let message = json!({"type": "user_message", "text": text});
    let path = format!("/v1/sessions/{session}/commands");
    as_user(app, "alice", "POST", &path, Some(message)).await;
}

/// The first tool result of `session`, once its history holds the answer `answer`.
async fn tool_result_once(app: &crate::router::App, session: &str, answer: &str) -> String {
    let all = messages_once(app, session, |m| m.iter().any(|m| m["content"] == answer)).await;
    let result = all.iter().find(|m| m["role"] == "tool").unwrap();
    result["content"].as_str().unwrap().to_owned()
}

const MANIFEST: &str = "---\nid: oncall\nname: On-call helper\ntools: [files]\n---\nYou keep the on-call rotation calm.\n";

#[tokio::test]
async fn a_pending_persona_is_refused_until_an_admin_consents_then_it_answers() {
    let mut app = people_with_script(SCRIPT).await;
    // The operator allows bundles from the app's folder (`[personas] folder_roots`).
    app.state.personas = std::sync::Arc::new(workmate_personas::InstallPolicy {
        folder_roots: vec![app.dir.path().to_owned()],
        ..Default::default()
    });
    app.router = workmate_server::http::router(app.state.clone());
    let bundle = app.dir.path().join("oncall");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(bundle.join("manifest.md"), MANIFEST).unwrap();

    let install = json!({"path": bundle});
    let (status, body) = as_user(
        &app,
        "alice",
        "POST",
        "/v1/personas/install",
        Some(install.clone()),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "members do not install: {body}"
    );
    let (status, body) =
        as_user(&app, "carol", "POST", "/v1/personas/install", Some(install)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["consent"]["needs_consent"], true);
    assert_eq!(
        body["consent"]["tools"],
        json!(["automation", "files", "wake"])
    );
    assert_eq!(
        body["consent"]["risk"],
        json!(["read", "schedule", "write_local"])
    );

    let (_, listed) = as_user(&app, "alice", "GET", "/v1/personas", None).await;
    let oncall = listed["personas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "oncall")
        .cloned()
        .unwrap();
    assert_eq!(oncall["state"], "pending");

    let with_persona = json!({"persona": "oncall"});
    let (status, body) = as_user(
        &app,
        "alice",
        "POST",
        "/v1/sessions",
        Some(with_persona.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body.to_string().contains("waiting for an admin's consent"),
        "{body}"
    );

    let consent = json!({"enabled": true});
    let (status, _) = as_user(
        &app,
        "alice",
        "POST",
        "/v1/personas/oncall",
        Some(consent.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "members do not consent");
    let (status, body) = as_user(&app, "carol", "POST", "/v1/personas/oncall", Some(consent)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["persona"]["state"], "enabled");
    let (_, audit) = as_user(
        &app,
        "carol",
        "GET",
        "/v1/audit?stage=persona_consent",
        None,
    )
    .await;
    let record = &audit["records"][0];
    assert_eq!(record["actor"], "carol", "the consent is audited: {audit}");
    assert_eq!(record["status"], "enabled", "{audit}");

    let skill = Skill::new(
        "handover",
        "Hand the pager over at the end of a shift",
        "1. List open incidents.",
        vec![],
    )
    .unwrap();
    Skills::new(app.store.clone())
        .save(
            &"default".into(),
            SkillScope::Tenant,
            "",
            &skill,
            &"carol".into(),
        )
        .await
        .unwrap();
    let (status, created) =
        as_user(&app, "alice", "POST", "/v1/sessions", Some(with_persona)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["persona"], "oncall");
    let session = created["session_id"].as_str().unwrap().to_owned();
    say(&app, &session, "hand the pager to Bob").await;
    let loaded = tool_result_once(&app, &session, "Handover done.").await;
    assert!(loaded.contains("1. List open incidents."), "{loaded}");
}

/// One conversation saves a skill (asking first); another, later, loads it.
const TEACHER: &str = r###"{"conversations": [
    {"when": "remember how", "turns": [
        {"tool_calls": [{"name": "save_skill", "arguments": {"name": "deploy", "description": "Deploy the web app", "instructions": "1. Tag the release.\n2. Run the pipeline.", "scope": "tenant"}}]},
        {"text": "Saved the skill."}]},
    {"when": "*", "turns": [
        {"requires_system": "- deploy: Deploy the web app", "tool_calls": [{"name": "load_skill", "arguments": {"name": "deploy"}}]},
        {"text": "Deploying."}]}]}"###;

#[tokio::test]
async fn a_skill_is_saved_only_once_approved_and_a_later_session_loads_it() {
    let app = people_with_script(TEACHER).await;
    let (_, created) = as_user(&app, "alice", "POST", "/v1/sessions", None).await;
    let teacher = created["session_id"].as_str().unwrap().to_owned();
    say(&app, &teacher, "remember how we deploy").await;
    let item = crate::support::eventually(
        "the teacher session's approval in the inbox",
        crate::support::PATIENCE,
        || async {
            let (_, listed) = as_user(
                &app,
                "alice",
                "GET",
                &format!("/v1/inbox?state=pending&session={teacher}"),
                None,
            )
            .await;
            listed["items"].as_array()?.first().cloned()
        },
    )
    .await;
    assert!(item.to_string().contains("save_skill"), "{item}");
    let skills = Skills::new(app.store.clone());
    let cowork = workmate_personas::default_persona();
    assert!(
        skills
            .visible(&"default".into(), &cowork, "")
            .await
            .unwrap()
            .is_empty(),
        "nothing saved before the approval"
    );
    let approve = json!({"resolution": {"type": "approval", "choice": "once"}});
    let id = item["id"].as_str().unwrap();
    let (status, body) = as_user(
        &app,
        "bob",
        "POST",
        &format!("/v1/inbox/{id}/resolve"),
        Some(approve),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    messages_once(&app, &teacher, |m| {
        m.iter().any(|m| m["content"] == "Saved the skill.")
    })
    .await;

    let (_, created) = as_user(&app, "alice", "POST", "/v1/sessions", None).await;
    let learner = created["session_id"].as_str().unwrap().to_owned();
    say(&app, &learner, "ship it").await;
    let loaded = tool_result_once(&app, &learner, "Deploying.").await;
    assert!(loaded.contains("Run the pipeline"), "{loaded}");
}
