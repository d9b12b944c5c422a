//! The Slack surface end to end, in process: signed Events API and block_actions requests in, Web
//! API calls out to a wiremock fake of Slack.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
use workmate_server::platforms::slack::SlackSurface;
use workmate_server::platforms::{Mounted, Platforms};
use workmate_store::{InboxItemState, SessionKey, Store};

use crate::router::app_with_script;
use crate::support::{self, Call, PATIENCE, eventually, thread_session};

pub(crate) const SECRET: &str = "test-signing-secret";
const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;
pub(crate) const THREAD: &str = "1700000000.0000";

/// The tenant of a Slack workspace.
pub(crate) fn tenant_of(team: &str) -> workmate_protocol::TenantId {
    workmate_chat::tenant_of(Surface::Slack, team)
}

pub(crate) struct SlackApp {
    pub(crate) router: Router,
    /// What the router was built from, to build another (single sign-on added).
    pub(crate) state: AppState,
    pub(crate) store: Store,
    pub(crate) hub: workmate_engine::SessionHub,
    pub(crate) chat: workmate_chat::Chat,
    pub(crate) _slack: Arc<SlackSurface>,
    pub(crate) fake: MockServer,
    pub(crate) _dir: tempfile::TempDir,
}

impl SlackApp {
    /// The session of a thread of C1, once the chat layer created it.
    async fn session_of(&self, thread: &str) -> workmate_store::SessionRecord {
        eventually("the thread's session", PATIENCE, || {
            thread_session(&self.store, Surface::Slack, "T1", "C1", thread)
        })
        .await
    }

    /// Says `text` in `THREAD` as U1, addressing the bot, then waits until the thread's session
    /// (`session`) holds what `done` looks for.
    async fn in_thread_until(
        &self,
        event_id: &str,
        ts: &str,
        text: &str,
        session: &workmate_protocol::SessionId,
        done: impl Fn(&workmate_store::SessionRecord) -> bool,
    ) {
        let event = in_thread(event_id, ts, "app_mention", &format!("<@UBOT> {text}"));
        signed(self, "events", &event, SECRET).await;
        let tenant = tenant_of("T1");
        eventually(
            "the thread's session to hold what the test looks for",
            PATIENCE,
            || async {
                let record = self.store.sessions().get(&tenant, session).await.unwrap()?;
                done(&record).then_some(())
            },
        )
        .await;
    }
}

async fn slack_app() -> SlackApp {
    slack_app_with(SCRIPT).await
}

pub(crate) async fn slack_app_with(script: &str) -> SlackApp {
    slack_app_admins(script, &[]).await
}

/// The app with `[platforms.slack] admins` set.
async fn slack_app_admins(script: &str, admins: &[&str]) -> SlackApp {
    let app = slack_app_unstarted(script, admins).await;
    app.chat.start();
    app
}

/// The app before the chat layer's workers start: deliveries are stored and wait.
async fn slack_app_unstarted(script: &str, admins: &[&str]) -> SlackApp {
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
        .and(path("/users.info"))
        .and(wiremock::matchers::body_string_contains("user=U1"))
        .respond_with(ok(json!({"user": {"id": "U1", "name": "ana", "real_name": "Ana Lima",
                                         "profile": {"display_name": "", "real_name": "Ana Lima"}}})))
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
    let mut config = SlackConfig::http(SECRET.into(), "xoxb-test".into(), &fake.uri());
    config.admins = admins.iter().map(|a| (*a).to_owned()).collect();
    let chat = app.state.chat.clone();
    chat.attach_scheduler(app.state.scheduler.clone());
    chat.observe(app.state.metrics.clone());
    let slack = SlackSurface::new(&config, &chat).unwrap();
    let state = AppState {
        platforms: Platforms::of([Arc::clone(&slack) as Arc<dyn Mounted>]),
        ..app.state.clone()
    };
    SlackApp {
        router: router(state.clone()),
        state,
        store: app.store.clone(),
        hub: app.state.hub.clone(),
        chat,
        _slack: slack,
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

pub(crate) async fn signed(
    app: &SlackApp,
    route: &str,
    body: &str,
    secret: &str,
) -> (StatusCode, Value) {
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

pub(crate) fn mention(event_id: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> say hi",
                  "ts": THREAD, "channel": "C1", "event_ts": THREAD}
    })
    .to_string()
}

/// A message in `THREAD` from U1: a mention, or a thread command.
pub(crate) fn in_thread(event_id: &str, ts: &str, kind: &str, text: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": kind, "channel_type": "channel", "user": "U1", "text": text,
                  "ts": ts, "thread_ts": THREAD, "channel": "C1", "event_ts": ts}
    })
    .to_string()
}

/// A unique Slack trigger id: each click and each slash command carries its own.
fn trigger() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!(
        "{}.1.t",
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    )
}

pub(crate) fn click(user: &str, value: &str) -> String {
    click_with(user, value, &trigger())
}

fn click_with(user: &str, value: &str, trigger_id: &str) -> String {
    let payload = json!({
        "type": "block_actions", "trigger_id": trigger_id,
        "user": {"id": user, "username": user, "name": user, "team_id": "T1"},
        "team": {"id": "T1", "domain": "acme"},
        "container": {"type": "message", "message_ts": "1700000000.0001", "channel_id": "C1",
                      "is_ephemeral": false},
        "channel": {"id": "C1", "name": "general"},
        "message": {"type": "message", "ts": "1700000000.0001", "text": "Run run_shell?",
                    "thread_ts": THREAD},
        "actions": [{"action_id": "wm:0", "block_id": "b", "type": "button", "value": value,
                     "action_ts": "1700000001.0"}]
    });
    let encoded: String =
        url::form_urlencoded::byte_serialize(payload.to_string().as_bytes()).collect();
    format!("payload={encoded}")
}

/// The fake's received calls of one method, as JSON bodies.
pub(crate) async fn calls(fake: &MockServer, api: &str) -> Vec<Value> {
    bodies(&support::calls(fake, &format!("/{api}")).await, api)
}

/// Polls until `check` holds on the calls of `api`, for at most 10 s.
pub(crate) async fn wait_for(
    fake: &MockServer,
    api: &str,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let seen = support::wait_for(fake, &format!("/{api}"), what, |seen| {
        check(&bodies(seen, api))
    })
    .await;
    bodies(&seen, api)
}

/// Polls until `check` holds on what the thread's cards showed, in order: every post and every
/// update (a card's first post may already show what a later update would), for at most 10 s.
pub(crate) async fn wait_shown(
    fake: &MockServer,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let shown = |calls: &[Call]| -> Vec<Value> {
        calls
            .iter()
            .filter(|c| c.path == "/chat.postMessage" || c.path == "/chat.update")
            .map(|c| c.body.clone())
            .collect()
    };
    let seen = support::wait_for(fake, "/chat.", what, |seen| check(&shown(seen))).await;
    shown(&seen)
}

/// The bodies of the calls of `api` itself, not of a longer method name that starts with it.
fn bodies(calls: &[Call], api: &str) -> Vec<Value> {
    calls
        .iter()
        .filter(|c| c.path.strip_prefix('/') == Some(api))
        .map(|c| c.body.clone())
        .collect()
}

/// Every button value in a message body.
pub(crate) fn button_values(body: &Value) -> Vec<String> {
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
async fn deliveries_are_counted_by_platform_and_outcome() {
    let app = slack_app().await;
    for _ in 0..2 {
        let (status, _) = signed(&app, "events", &mention("EvCounted"), SECRET).await;
        assert_eq!(status, StatusCode::OK);
    }
    let text = app.state.metrics.render((0, 0)).unwrap();
    for line in [
        r#"workmate_deliveries_total{platform="slack",outcome="stored"} 1"#,
        r#"workmate_deliveries_total{platform="slack",outcome="duplicate"} 1"#,
        r#"workmate_delivery_ack_seconds_count{platform="slack"} 2"#,
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(line)),
            "missing {line:?}:\n{text}"
        );
    }
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
        |p| {
            p.len() >= 2
                && p.iter()
                    .any(|b| button_values(b).iter().any(|v| v.contains("once")))
        },
    )
    .await;
    assert!(
        posts
            .iter()
            .all(|p| p["channel"] == "C1" && p["thread_ts"] == THREAD)
    );
    let approval = posts
        .iter()
        .find(|p| button_values(p).iter().any(|v| v.contains("once")))
        .unwrap();
    assert!(approval.to_string().contains("echo hi"), "{approval:#}");
    assert!(
        approval.to_string().contains("Requested by: Ana Lima"),
        "the approver sees who asked, by name: {approval:#}"
    );
    let once = button_values(approval)
        .into_iter()
        .find(|v| v.contains("once"))
        .expect("a once button");
    let ButtonAction::Resolve { item_id, .. } =
        workmate_slack::blocks::decode_button_value(&once).unwrap()
    else {
        panic!("the once button resolves the item");
    };
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
    assert_eq!(
        ephemeral[0]["thread_ts"], THREAD,
        "the refusal shows in the thread"
    );
    let refusal = ephemeral[0].to_string();
    assert!(refusal.contains("Only Ana Lima"), "by name: {refusal}");
    assert!(!refusal.contains("slack-U"), "no internal ids: {refusal}");

    // U2 writes in the thread while the approval waits: told privately, by name, that the
    // conversation is Ana's; nothing reaches it.
    let from_u2 = in_thread("EvU2", "1700000000.0100", "app_mention", "<@UBOT> also EU")
        .replace(r#""user":"U1""#, r#""user":"U2""#);
    signed(&app, "events", &from_u2, SECRET).await;
    let ephemeral = wait_for(&app.fake, "chat.postEphemeral", "U2 told", |e| e.len() >= 2).await;
    let told = ephemeral[1].to_string();
    assert_eq!(ephemeral[1]["user"], "U2");
    assert!(
        told.contains("only Ana Lima (who started it)") && !told.contains("slack-U"),
        "{told}"
    );
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
    wait_for(&app.fake, "chat.update", "the approved card", |updates| {
        updates
            .iter()
            .any(|u| u.to_string().contains("Approved by Ana Lima"))
    })
    .await;
    // The answer goes below the approval card: a new message, then its updates.
    wait_for(
        &app.fake,
        "chat.postMessage",
        "the answer's card",
        |posts| posts.len() >= 3,
    )
    .await;
    wait_shown(&app.fake, "the answer", |updates| {
        updates.iter().any(|u| u.to_string().contains("Done."))
    })
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
        2,
        "the owner is not refused"
    );
    // The first turn card no longer says it waits: it says who approved, and the answer
    // continues below.
    let first_card = wait_for(
        &app.fake,
        "chat.update",
        "the first card closed",
        |updates| {
            updates.iter().any(|u| {
                u.to_string().contains("✅ Approved by Ana Lima")
                    && u.to_string().contains("Continued below")
            })
        },
    )
    .await;
    let closed = first_card
        .iter()
        .rev()
        .find(|u| u.to_string().contains("Continued below"))
        .unwrap();
    assert!(
        !closed.to_string().contains("Waiting for approval"),
        "{closed:#}"
    );
    app.chat.shutdown(Duration::from_secs(2)).await;
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
    app.chat.shutdown(Duration::from_secs(2)).await;
    let tenant = tenant_of("T1");
    let session = thread_session(&app.store, Surface::Slack, "T1", "C1", THREAD)
        .await
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
    app.chat.shutdown(Duration::from_secs(1)).await;
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

mod approvers;
mod automation_commands;
mod automation_runs;
mod commands;
mod compaction;
pub(crate) mod connectors;
mod files;
mod latency;
pub(crate) mod link;
mod personas;
mod plans;
mod recall;
mod replies;
mod send_message;
mod settings_commands;
mod shared;
mod socket;
mod stop;
