//! `/workmate` slash commands over the signed commands route.

use super::*;

fn slash_body(user: &str, text: &str) -> String {
    slash_body_with(user, text, &trigger())
}

pub(super) fn slash_body_with(user: &str, text: &str, trigger_id: &str) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("token", "t")
        .append_pair("team_id", "T1")
        .append_pair("team_domain", "acme")
        .append_pair("channel_id", "C1")
        .append_pair("channel_name", "general")
        .append_pair("user_id", user)
        .append_pair("user_name", user)
        .append_pair("command", "/workmate")
        .append_pair("text", text)
        .append_pair("api_app_id", "A1")
        .append_pair("response_url", "https://hooks.slack.invalid/commands/1")
        .append_pair("trigger_id", trigger_id)
        .finish()
}

/// Sends a signed `/workmate <text>` from `user`; expects an ephemeral answer and returns its text.
pub(super) async fn slash(app: &SlackApp, user: &str, text: &str) -> String {
    let (status, body) = signed(app, "commands", &slash_body(user, text), SECRET).await;
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert_eq!(body["response_type"], "ephemeral", "{body:#}");
    body["text"].as_str().unwrap().to_owned()
}

pub(super) async fn set_role(store: &Store, user: &str, role: workmate_store::Role) {
    let tenant = tenant_of("T1");
    let id = workmate_protocol::UserId::from(format!("slack-{user}"));
    let mut current = store
        .tenants()
        .get_user(&tenant, &id)
        .await
        .unwrap()
        .unwrap();
    current.role = role;
    let new = workmate_store::NewUser {
        id: current.id,
        display_name: current.display_name,
        email: current.email,
        role,
        sso_subject: current.sso_subject,
    };
    store.tenants().upsert_user(&tenant, &new).await.unwrap();
}

async fn role_of(store: &Store, user: &str) -> workmate_store::Role {
    let id = workmate_protocol::UserId::from(format!("slack-{user}"));
    store
        .tenants()
        .get_user(&tenant_of("T1"), &id)
        .await
        .unwrap()
        .unwrap()
        .role
}

/// The channel-level session of C1, owned by `slack-<owner>`.
async fn channel_session(store: &Store, owner: &str) -> workmate_store::SessionRecord {
    let new = workmate_store::NewSession {
        key: SessionKey {
            surface: Surface::Slack,
            chat_id: "C1".into(),
            thread_id: String::new(),
        },
        owner: format!("slack-{owner}").into(),
        title: None,
        persona: "cowork".into(),
        model: "scripted:test".into(),
        mode: Default::default(),
        unattended: false,
    };
    store
        .sessions()
        .get_or_create(&tenant_of("T1"), &new)
        .await
        .unwrap()
        .0
}

pub(super) async fn chat_command_audits(store: &Store) -> Vec<workmate_store::AuditRecord> {
    store
        .audit()
        .recent(&tenant_of("T1"), 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.stage == "chat_command")
        .collect()
}

#[tokio::test]
async fn whoami_and_help_answer_privately() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "whoami").await;
    assert!(text.contains("slack-U1"), "{text}");
    assert!(text.contains("member"), "{text}");
    assert!(text.contains(tenant_of("T1").as_str()), "{text}");
    let text = slash(&app, "U1", "help").await;
    for command in [
        "whoami",
        "mode",
        "model",
        "stop",
        "inbox",
        "rules",
        "usage",
        "role grant",
    ] {
        assert!(text.contains(command), "{command} missing from {text}");
    }
    let text = slash(&app, "U1", "launch rockets").await;
    assert!(text.contains("unknown command `launch`"), "{text}");
    assert!(text.contains(workmate_chat::commands::USAGE), "{text}");

    let audits = chat_command_audits(&app.store).await;
    assert_eq!(audits.len(), 3, "one audit record per command: {audits:#?}");
    let mut commands: Vec<&str> = audits
        .iter()
        .map(|a| a.detail["command"].as_str().unwrap())
        .collect();
    commands.sort_unstable();
    assert_eq!(commands, ["help", "invalid", "whoami"]);
    assert!(
        audits
            .iter()
            .all(|a| a.actor.as_deref() == Some("slack-U1"))
    );
}

#[tokio::test]
async fn only_admins_change_roles_and_the_last_admin_stays() {
    use workmate_store::Role;
    let app = slack_app().await;
    let text = slash(&app, "U1", "role grant <@U2|bob> approver").await;
    assert!(text.contains("Only admins"), "{text}");
    assert_eq!(role_of(&app.store, "U1").await, Role::Member);

    set_role(&app.store, "U1", Role::Admin).await;
    let text = slash(&app, "U1", "role grant <@U2|bob> approver").await;
    assert!(text.contains("U2 is now approver"), "{text}");
    assert_eq!(role_of(&app.store, "U2").await, Role::Approver);

    let text = slash(&app, "U1", "role revoke <@U1> admin").await;
    assert!(text.contains("last admin"), "{text}");
    assert_eq!(role_of(&app.store, "U1").await, Role::Admin);

    let audits = chat_command_audits(&app.store).await;
    let outcomes: Vec<(&str, &str)> = audits
        .iter()
        .map(|a| {
            (
                a.detail["command"].as_str().unwrap(),
                a.detail["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes.len(), 3, "{outcomes:?}");
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == ("role_grant", "refused"))
            .count(),
        1
    );
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == ("role_grant", "ok"))
            .count(),
        1
    );
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == ("role_revoke", "refused"))
            .count(),
        1
    );
}

/// A mention in the thread `THREAD` from `user` saying `text` (after the bot's mention).
fn thread_mention(event_id: &str, user: &str, ts: &str, text: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": user, "text": format!("<@UBOT> {text}"),
                  "ts": ts, "thread_ts": THREAD, "channel": "C1", "event_ts": ts}
    })
    .to_string()
}

#[tokio::test]
async fn a_command_typed_in_a_thread_acts_on_its_session_for_its_owner() {
    let app = slack_app().await;
    signed(&app, "events", &mention("Ev1"), SECRET).await;
    let session = app.session_of(THREAD).await;
    let text = slash(&app, "U1", "mode plan").await;
    assert!(text.contains("inside the conversation's thread"), "{text}");

    let body = thread_mention("Ev2", "U2", "1700000000.0100", "/workmate mode auto");
    assert_eq!(
        signed(&app, "events", &body, SECRET).await.0,
        StatusCode::OK
    );
    wait_for(
        &app.fake,
        "chat.postEphemeral",
        "the stranger's refusal",
        |e| {
            e.iter()
                .any(|b| b["user"] == "U2" && b.to_string().contains("Only the conversation"))
        },
    )
    .await;
    let body = thread_mention("Ev3", "U1", "1700000000.0200", "/workmate mode plan");
    signed(&app, "events", &body, SECRET).await;
    wait_for(&app.fake, "chat.postEphemeral", "the owner's answer", |e| {
        e.iter()
            .any(|b| b["user"] == "U1" && b.to_string().contains("mode set to plan"))
    })
    .await;
    let stored = app
        .store
        .sessions()
        .get(&tenant_of("T1"), &session.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.mode, workmate_protocol::PermissionMode::Plan);
    let audits = chat_command_audits(&app.store).await;
    assert!(
        audits
            .iter()
            .any(|a| a.detail["outcome"] == "ok" && a.session_id.as_ref() == Some(&session.id)),
        "{audits:#?}"
    );
}

#[tokio::test]
async fn a_replayed_role_grant_body_changes_nothing() {
    let app = slack_app().await;
    slash(&app, "U1", "whoami").await;
    set_role(&app.store, "U1", workmate_store::Role::Admin).await;
    let grant = slash_body_with("U1", "role grant U2 approver", "replayed.1.t");
    let (status, body) = signed(&app, "commands", &grant, SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body["text"].as_str().unwrap().contains("is now approver"),
        "{body:#}"
    );
    let text = slash(&app, "U1", "role revoke U2 approver").await;
    assert!(text.contains("is now a member"), "{text}");
    // The very same signed body again, inside Slack's five minutes.
    let (status, body) = signed(&app, "commands", &grant, SECRET).await;
    assert_eq!(status, StatusCode::OK, "a replay is acknowledged");
    assert!(
        body["text"].as_str().unwrap().contains("delivered twice"),
        "{body:#}"
    );
    assert_eq!(
        role_of(&app.store, "U2").await,
        workmate_store::Role::Member,
        "and not applied"
    );
}

#[tokio::test]
async fn inbox_lists_pending_items_with_their_tokens() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "inbox").await;
    assert!(text.contains("Nothing is waiting"), "{text}");

    let session = channel_session(&app.store, "U1").await;
    let new = workmate_store::NewInboxItem {
        session_id: session.id.clone(),
        tool_call_id: None,
        kind: workmate_protocol::InboxItemKind::Approval,
        title: "Run `rm -rf build`".into(),
        body: String::new(),
        inbox: "default".into(),
        visibility: workmate_protocol::Visibility::Inline,
        requested_by: Some(session.owner.clone()),
        data: json!({}),
    };
    let (item, _) = app
        .store
        .inbox()
        .park(&tenant_of("T1"), &new)
        .await
        .unwrap();
    let token = workmate_engine::reply_token(&item.id);

    let text = slash(&app, "U1", "inbox").await;
    assert!(text.contains(&token), "{text}");
    assert!(text.contains("Run `rm -rf build`"), "{text}");
    // Not U2's session, and U2 is a member: nothing for them.
    let text = slash(&app, "U2", "inbox").await;
    assert!(!text.contains(&token), "{text}");
    set_role(&app.store, "U2", workmate_store::Role::Approver).await;
    let text = slash(&app, "U2", "inbox").await;
    assert!(text.contains(&token), "{text}");
    assert_eq!(chat_command_audits(&app.store).await.len(), 4);
}

#[tokio::test]
async fn a_badly_signed_command_is_rejected() {
    let app = slack_app().await;
    let (status, _) = signed(
        &app,
        "commands",
        &slash_body("U1", "whoami"),
        "wrong-secret",
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(chat_command_audits(&app.store).await.is_empty());
}

#[tokio::test]
async fn memory_saving_is_switched_per_person() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "memory").await;
    assert!(text.contains("Memory saving is on for you"), "{text}");
    let text = slash(&app, "U1", "memory off").await;
    assert!(text.contains("Memory saving is off for you"), "{text}");
    let tenant = tenant_of("T1");
    let memories = app.store.memories();
    assert!(
        !memories
            .saving_on(&tenant, &"slack-U1".into())
            .await
            .unwrap()
    );
    slash(&app, "U2", "whoami").await;
    assert!(
        memories
            .saving_on(&tenant, &"slack-U2".into())
            .await
            .unwrap(),
        "another person's switch is their own"
    );
    let text = slash(&app, "U1", "memory on").await;
    assert!(text.contains("Memory saving is on for you"), "{text}");
    assert!(
        memories
            .saving_on(&tenant, &"slack-U1".into())
            .await
            .unwrap()
    );
    let text = slash(&app, "U1", "memory sometimes").await;
    assert!(text.contains("memory takes on or off"), "{text}");
}
