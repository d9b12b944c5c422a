//! The Slack surface end to end, in process: signed Events API and block_actions requests in, Web
//! API calls out to a wiremock fake of Slack.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_cards::ButtonAction;
use workmate_protocol::Surface;
use workmate_server::config::SlackConfig;
use workmate_server::http::{AppState, router};
use workmate_server::platforms::slack::{SlackSurface, tenant_of};
use workmate_store::{InboxItemState, SessionKey, Store};

use crate::router::app_with_script;

const SECRET: &str = "test-signing-secret";
const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;
const THREAD: &str = "1700000000.0000";

struct SlackApp {
    router: Router,
    store: Store,
    slack: Arc<SlackSurface>,
    fake: MockServer,
    _dir: tempfile::TempDir,
}

async fn slack_app() -> SlackApp {
    slack_app_with(SCRIPT).await
}

async fn slack_app_with(script: &str) -> SlackApp {
    let fake = MockServer::start().await;
    let ok = |extra: Value| {
        let mut body = json!({"ok": true});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        ResponseTemplate::new(200).set_body_json(body)
    };
    Mock::given(method("POST"))
        .and(path("/chat.postMessage"))
        .respond_with(ok(json!({"channel": "C1", "ts": "1700000000.0001"})))
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/chat.update"))
        .respond_with(ok(json!({"channel": "C1", "ts": "1700000000.0001"})))
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/chat.postEphemeral"))
        .respond_with(ok(json!({"message_ts": "1700000000.0009"})))
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/auth.test"))
        .respond_with(ok(
            json!({"team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"}),
        ))
        .mount(&fake)
        .await;
    let app = app_with_script(script).await;
    let config = SlackConfig::http(SECRET.into(), "xoxb-test".into(), &fake.uri());
    let slack = SlackSurface::new(&config, app.state.hub.clone()).unwrap();
    let state = AppState {
        slack: Some(Arc::clone(&slack)),
        ..app.state.clone()
    };
    SlackApp {
        router: router(state),
        store: app.store.clone(),
        slack,
        fake,
        _dir: app.dir,
    }
}

fn now() -> String {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string()
}

async fn signed(app: &SlackApp, route: &str, body: &str, secret: &str) -> (StatusCode, Value) {
    let timestamp = now();
    let signature = workmate_slack::sign(secret.as_bytes(), &timestamp, body.as_bytes());
    let request = Request::builder()
        .method("POST")
        .uri(format!("/v1/platforms/slack/{route}"))
        .header("x-slack-request-timestamp", timestamp)
        .header("x-slack-signature", signature)
        .body(Body::from(body.to_owned()))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn mention(event_id: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> say hi",
                  "ts": THREAD, "channel": "C1", "event_ts": THREAD}
    })
    .to_string()
}

fn click(user: &str, value: &str) -> String {
    let payload = json!({
        "type": "block_actions",
        "user": {"id": user, "username": user, "name": user, "team_id": "T1"},
        "team": {"id": "T1", "domain": "acme"},
        "container": {"type": "message", "message_ts": "1700000000.0001", "channel_id": "C1",
                      "is_ephemeral": false},
        "channel": {"id": "C1", "name": "general"},
        "actions": [{"action_id": "wm:0", "block_id": "b", "type": "button", "value": value,
                     "action_ts": "1700000001.0"}]
    });
    let encoded: String =
        url::form_urlencoded::byte_serialize(payload.to_string().as_bytes()).collect();
    format!("payload={encoded}")
}

/// The fake's received calls of one method, as JSON bodies.
async fn calls(fake: &MockServer, api: &str) -> Vec<Value> {
    fake.received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path() == format!("/{api}"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// Polls until `check` holds on the calls of `api`, for at most 10 s.
async fn wait_for(
    fake: &MockServer,
    api: &str,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = calls(fake, api).await;
        if check(&seen) {
            return seen;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {api} calls were {seen:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every button value in a message body.
fn button_values(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for block in body["blocks"].as_array().into_iter().flatten() {
        for element in block["elements"].as_array().into_iter().flatten() {
            if let Some(value) = element["value"].as_str() {
                out.push(value.to_owned());
            }
        }
    }
    out
}

#[tokio::test]
async fn a_mention_runs_a_turn_with_an_approval_in_the_thread() {
    let app = slack_app().await;
    let (status, _) = signed(&app, "events", &mention("Ev1"), SECRET).await;
    assert_eq!(status, StatusCode::OK);

    let posts = wait_for(
        &app.fake,
        "chat.postMessage",
        "turn and approval cards",
        |p| p.len() >= 2 && p.iter().any(|b| !button_values(b).is_empty()),
    )
    .await;
    assert!(
        posts
            .iter()
            .all(|p| p["channel"] == "C1" && p["thread_ts"] == THREAD)
    );
    let approval = posts.iter().find(|p| !button_values(p).is_empty()).unwrap();
    assert!(approval.to_string().contains("echo hi"), "{approval:#}");
    let once = button_values(approval)
        .into_iter()
        .find(|v| v.contains("once"))
        .expect("a once button");
    let ButtonAction::Resolve { item_id, .. } =
        workmate_slack::blocks::decode_button_value(&once).unwrap();
    let tenant = tenant_of("T1");

    // A stranger's click is refused, privately, and changes nothing.
    let (status, _) = signed(&app, "interactions", &click("U2", &once), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    let ephemeral = wait_for(&app.fake, "chat.postEphemeral", "refusal", |e| {
        !e.is_empty()
    })
    .await;
    assert_eq!(ephemeral[0]["user"], "U2");
    assert_eq!(ephemeral[0]["channel"], "C1");
    let item = app
        .store
        .inbox()
        .get(&tenant, &item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.state, InboxItemState::Pending);

    // The owner approves once: the approval card says who, the turn card gets the answer.
    let (status, _) = signed(&app, "interactions", &click("U1", &once), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    wait_for(
        &app.fake,
        "chat.update",
        "approved card and answer",
        |updates| {
            let text: Vec<String> = updates.iter().map(Value::to_string).collect();
            text.iter()
                .any(|t| t.contains("Approved by") && t.contains("U1"))
                && text.iter().any(|t| t.contains("Done."))
        },
    )
    .await;
    let item = app
        .store
        .inbox()
        .get(&tenant, &item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.resolved_by.unwrap().as_str(), "slack-U1");
    assert_eq!(
        calls(&app.fake, "chat.postEphemeral").await.len(),
        1,
        "the owner is not refused"
    );
    app.slack.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_redelivered_event_runs_one_turn() {
    let app = slack_app().await;
    let body = mention("EvSame");
    for _ in 0..4 {
        let (status, _) = signed(&app, "events", &body, SECRET).await;
        assert_eq!(status, StatusCode::OK);
    }
    wait_for(&app.fake, "chat.postMessage", "cards", |p| p.len() >= 2).await;
    // Every accepted job has run once the queue is shut down.
    app.slack.shutdown(Duration::from_secs(2)).await;
    let tenant = tenant_of("T1");
    let key = SessionKey {
        surface: Surface::Slack,
        chat_id: "C1".into(),
        thread_id: THREAD.into(),
    };
    let session = app
        .store
        .sessions()
        .find_by_key(&tenant, &key)
        .await
        .unwrap()
        .unwrap();
    let messages = app
        .store
        .messages()
        .list(&tenant, &session.id)
        .await
        .unwrap();
    let messages = serde_json::to_value(&messages).unwrap();
    let users = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 1, "{messages:#}");
    assert_eq!(calls(&app.fake, "chat.postMessage").await.len(), 2);
}

#[tokio::test]
async fn bad_signatures_and_handshakes() {
    let app = slack_app().await;
    let (status, _) = signed(&app, "events", &mention("Ev2"), "wrong-secret").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = signed(&app, "interactions", &click("U1", "{}"), "wrong-secret").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = json!({"type": "url_verification", "token": "t", "challenge": "abc123"});
    let (status, body) = signed(&app, "events", &challenge.to_string(), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"challenge": "abc123"}));
    app.slack.shutdown(Duration::from_secs(1)).await;
    assert!(calls(&app.fake, "chat.postMessage").await.is_empty());
}

#[tokio::test]
async fn slack_routes_answer_404_when_not_configured() {
    let app = app_with_script(SCRIPT).await;
    let request = Request::builder()
        .method("POST")
        .uri("/v1/platforms/slack/events")
        .body(Body::from("{}"))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&bytes).contains("Slack is not configured"));
}

// ---- /workmate slash commands ----

fn slash_body(user: &str, text: &str) -> String {
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
        .append_pair("trigger_id", "1.2.3")
        .finish()
}

/// Sends a signed `/workmate <text>` from `user`; expects an ephemeral answer and returns its text.
async fn slash(app: &SlackApp, user: &str, text: &str) -> String {
    let (status, body) = signed(app, "commands", &slash_body(user, text), SECRET).await;
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert_eq!(body["response_type"], "ephemeral", "{body:#}");
    body["text"].as_str().unwrap().to_owned()
}

async fn set_role(store: &Store, user: &str, role: workmate_store::Role) {
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

async fn chat_command_audits(store: &Store) -> Vec<workmate_store::AuditRecord> {
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
    assert!(text.contains(workmate_adapter::USAGE), "{text}");

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
    assert!(text.contains("slack-U2 is now approver"), "{text}");
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

#[tokio::test]
async fn the_owner_sets_the_channel_sessions_mode() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "mode plan").await;
    assert!(text.contains("No session in this channel yet"), "{text}");

    let session = channel_session(&app.store, "U1").await;
    let text = slash(&app, "U2", "mode auto").await;
    assert!(text.contains("Only the session's owner"), "{text}");
    let text = slash(&app, "U1", "mode plan").await;
    assert!(text.contains("mode set to plan"), "{text}");
    assert!(text.contains("channel-level session"), "{text}");
    let stored = app
        .store
        .sessions()
        .get(&tenant_of("T1"), &session.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.mode, workmate_protocol::PermissionMode::Plan);
    let text = slash(&app, "U2", "mode").await;
    assert!(text.contains("mode is plan"), "{text}");

    let audits = chat_command_audits(&app.store).await;
    assert_eq!(audits.len(), 4, "{audits:#?}");
    assert!(
        audits
            .iter()
            .filter(|a| a.detail["outcome"] == "ok")
            .all(|a| a.session_id.as_ref() == Some(&session.id))
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

/// A mention with its own `ts`, as a reply in `thread` (or opening a thread of its own).
fn mention_at(event_id: &str, ts: &str, thread: Option<&str>) -> String {
    let mut event = json!({"type": "app_mention", "user": "U1", "text": "<@UBOT> go slowly",
                           "ts": ts, "channel": "C1", "event_ts": ts});
    if let Some(thread) = thread {
        event["thread_ts"] = json!(thread);
    }
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000, "event": event
    })
    .to_string()
}

/// One signed events request, timed around the whole request (status and wall time).
async fn timed_event(router: Router, body: String) -> (StatusCode, Duration) {
    let timestamp = now();
    let signature = workmate_slack::sign(SECRET.as_bytes(), &timestamp, body.as_bytes());
    let request = Request::builder()
        .method("POST")
        .uri("/v1/platforms/slack/events")
        .header("x-slack-request-timestamp", timestamp)
        .header("x-slack-signature", signature)
        .body(Body::from(body))
        .unwrap();
    let started = Instant::now();
    let response = router.oneshot(request).await.unwrap();
    let status = response.status();
    response.into_body().collect().await.unwrap();
    (status, started.elapsed())
}

/// The issue's acceptance bullet asks for this one timing test; the bound is generous (the
/// handler only verifies, decodes and queues, in well under a millisecond) so it fails only if
/// the ack waits on the engine or on Slack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ack_latency_stays_under_100_ms_while_the_engine_is_busy() {
    let slow = json!({"text": "one two three four five six seven eight", "chunk_delay_ms": 200});
    let script = json!({"conversations": [{"when": "*", "turns": [slow, slow, slow, slow]}]});
    let app = slack_app_with(&script.to_string()).await;
    let first = "1700000100.0000";
    let (status, _) = timed_event(app.router.clone(), mention_at("EvBusy0", first, None)).await;
    assert_eq!(status, StatusCode::OK);
    // The first turn is streaming (its card is posted) before the timed events go in.
    wait_for(&app.fake, "chat.postMessage", "first turn card", |p| {
        !p.is_empty()
    })
    .await;

    // Even events reply in the busy thread, odd ones open threads of their own.
    let body = |i: usize| {
        let ts = format!("1700000101.{i:04}");
        let thread = i.is_multiple_of(2).then_some(first);
        mention_at(&format!("EvBusy{}", i + 1), &ts, thread)
    };
    let concurrent: Vec<_> = (0..10)
        .map(|i| tokio::spawn(timed_event(app.router.clone(), body(i))))
        .collect();
    let mut timings = Vec::new();
    for handle in concurrent {
        timings.push(handle.await.unwrap());
    }
    for i in 10..20 {
        timings.push(timed_event(app.router.clone(), body(i)).await);
    }
    assert_eq!(timings.len(), 20);
    for (i, (status, took)) in timings.iter().enumerate() {
        assert_eq!(*status, StatusCode::OK, "event {i}");
        assert!(
            *took < Duration::from_millis(100),
            "event {i} was acknowledged after {took:?}"
        );
    }
    // The acknowledged events were processed: each new thread got a turn card of its own.
    let opened: Vec<String> = (0..20_usize)
        .filter(|i| !i.is_multiple_of(2_usize))
        .map(|i| format!("1700000101.{i:04}"))
        .collect();
    wait_for(
        &app.fake,
        "chat.postMessage",
        "cards in the new threads",
        |p| {
            opened
                .iter()
                .all(|ts| p.iter().any(|b| b["thread_ts"] == ts.as_str()))
        },
    )
    .await;
}

/// Socket Mode end to end: a fake Slack hands out a `ws://` URL to a raw WebSocket server that
/// sends an app_mention and a slash command; the turn card goes out through the fake Web API.
#[tokio::test]
async fn socket_mode_turns_a_mention_into_a_turn_card_and_answers_commands_in_the_ack() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let ok = |extra: Value| {
        let mut body = json!({"ok": true});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        ResponseTemplate::new(200).set_body_json(body)
    };
    let fake = MockServer::start().await;
    for (api, extra) in [
        (
            "/chat.postMessage",
            json!({"channel": "C1", "ts": "1700000000.0001"}),
        ),
        (
            "/chat.update",
            json!({"channel": "C1", "ts": "1700000000.0001"}),
        ),
        (
            "/auth.test",
            json!({"team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"}),
        ),
        (
            "/apps.connections.open",
            json!({"url": format!("ws://127.0.0.1:{port}/link/?ticket=t")}),
        ),
    ] {
        Mock::given(method("POST"))
            .and(path(api))
            .respond_with(ok(extra))
            .mount(&fake)
            .await;
    }
    let app = app_with_script(SCRIPT).await;
    let config = SlackConfig::socket("xapp-test".into(), "xoxb-test".into(), &fake.uri());
    let slack = SlackSurface::new(&config, app.state.hub.clone()).unwrap();

    let (stream, _) = tokio::time::timeout(Duration::from_secs(10), listener.accept())
        .await
        .unwrap()
        .unwrap();
    let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
    let next_text = async |ws: &mut tokio_tungstenite::WebSocketStream<_>| loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Text(text) = frame {
            return serde_json::from_str::<Value>(text.as_str()).unwrap();
        }
    };
    let envelope = |kind: &str, id: &str, payload: Value, respond: bool| {
        Message::text(
            json!({"type": kind, "envelope_id": id, "payload": payload,
                   "accepts_response_payload": respond})
            .to_string(),
        )
    };
    ws.send(Message::text(json!({"type": "hello"}).to_string()))
        .await
        .unwrap();
    let event: Value = serde_json::from_str(&mention("EvS1")).unwrap();
    ws.send(envelope("events_api", "env-1", event, false))
        .await
        .unwrap();
    assert_eq!(next_text(&mut ws).await, json!({"envelope_id": "env-1"}));
    let posts = wait_for(&fake, "chat.postMessage", "the turn card", |p| {
        !p.is_empty()
    })
    .await;
    assert_eq!(posts[0]["channel"], "C1");
    assert_eq!(posts[0]["thread_ts"], THREAD);

    let command = json!({
        "team_id": "T1", "team_domain": "acme", "channel_id": "C1", "channel_name": "general",
        "user_id": "U1", "user_name": "ana", "command": "/workmate", "text": "whoami",
        "api_app_id": "A1", "response_url": "https://hooks.slack.invalid/c", "trigger_id": "t"
    });
    ws.send(envelope("slash_commands", "env-2", command, true))
        .await
        .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack["envelope_id"], "env-2");
    assert_eq!(ack["payload"]["response_type"], "ephemeral");
    assert!(
        ack["payload"]["text"]
            .as_str()
            .unwrap()
            .contains("You are slack-U1"),
        "{ack}"
    );

    slack.shutdown(Duration::from_secs(1)).await;
    let closed = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap();
    assert!(matches!(
        closed,
        None | Some(Ok(Message::Close(_))) | Some(Err(_))
    ));
    drop(app);
}
