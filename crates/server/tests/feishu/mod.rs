//! The Feishu surface end to end, in process: encrypted, signed events and card callbacks in,
//! open-platform calls out to a fake Feishu.

pub(crate) mod fake;
mod groups;
mod link;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use wiremock::MockServer;
use workmate_feishu::crypto;
use workmate_protocol::{EventKind, Surface};
use workmate_server::config::FeishuConfig;
use workmate_server::http::{AppState, router};
use workmate_server::platforms::feishu::FeishuSurface;
use workmate_server::platforms::{Mounted, Platforms};
use workmate_store::{InboxFilter, InboxItem, InboxItemState, Store};

use crate::router::app_with_script;
use crate::support::{Call, PATIENCE, calls, eventually, thread_session, wait_for};

pub(crate) const ENCRYPT_KEY: &str = "test-encrypt-key";
const TOKEN: &str = "test-verification-token";
const TENANT_KEY: &str = "tk_acme";
const CHAT: &str = "oc_general";
const ROOT: &str = "om_root";
pub(crate) const SHELL: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;
const STREAMED: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "one two three four five six seven eight nine ten", "chunk_delay_ms": 90}]}]}"#;

pub(crate) struct FeishuApp {
    router: Router,
    /// What the router was built from, to build another (single sign-on added).
    state: AppState,
    store: Store,
    fake: MockServer,
    _surface: Arc<FeishuSurface>,
    _dir: tempfile::TempDir,
}

pub(crate) async fn feishu_app(script: &str) -> FeishuApp {
    let fake = fake::feishu().await;
    let app = app_with_script(script).await;
    let config = FeishuConfig::webhook(
        "cli_test",
        "app-secret".into(),
        Some(ENCRYPT_KEY.into()),
        Some(TOKEN.into()),
        &fake.uri(),
    )
    .with_admins(vec!["ou_boss".into()]);
    let chat = app.state.chat.clone();
    chat.attach_scheduler(app.state.scheduler.clone());
    let surface = FeishuSurface::new(&config, &chat).unwrap();
    chat.start();
    let state = AppState {
        platforms: Platforms::of([Arc::clone(&surface) as Arc<dyn Mounted>]),
        ..app.state.clone()
    };
    FeishuApp {
        router: router(state.clone()),
        state,
        store: app.store.clone(),
        fake,
        _surface: surface,
        _dir: app.dir,
    }
}

/// Posts `plaintext` encrypted and signed, as Feishu does; the status and JSON answer.
pub(crate) async fn post(app: &FeishuApp, route: &str, plaintext: &str) -> (StatusCode, Value) {
    let sealed = crypto::encrypt_with(ENCRYPT_KEY, *b"0123456789abcdef", plaintext);
    let body = json!({ "encrypt": sealed }).to_string();
    let now = crate::support::unix_now_s();
    let signature = crypto::signature(&now, "nonce-1", ENCRYPT_KEY, body.as_bytes());
    send_at(app, route, &body, &signature, &now).await
}

pub(crate) async fn send(
    app: &FeishuApp,
    route: &str,
    body: &str,
    signature: &str,
) -> (StatusCode, Value) {
    send_at(app, route, body, signature, &crate::support::unix_now_s()).await
}

/// Posts `body` signed at `timestamp` (Unix seconds).
pub(crate) async fn send_at(
    app: &FeishuApp,
    route: &str,
    body: &str,
    signature: &str,
    timestamp: &str,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method("POST")
        .uri(format!("/v1/platforms/feishu/{route}"))
        .header("content-type", "application/json")
        .header("x-lark-request-timestamp", timestamp)
        .header("x-lark-request-nonce", "nonce-1")
        .header("x-lark-signature", signature)
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

pub(crate) fn mention(event_id: &str, text: &str) -> String {
    let content = json!({ "text": format!("@_user_1 {text}") }).to_string();
    json!({
        "schema": "2.0",
        "header": {"event_id": event_id, "event_type": "im.message.receive_v1",
                   "create_time": "1700000000000", "token": TOKEN, "app_id": "cli_test",
                   "tenant_key": TENANT_KEY},
        "event": {
            "sender": {"sender_id": {"open_id": "ou_ana", "union_id": "on_ana", "user_id": "ana"},
                       "sender_type": "user", "tenant_key": TENANT_KEY},
            "message": {"message_id": ROOT, "root_id": "", "parent_id": "", "chat_id": CHAT,
                        "chat_type": "group", "message_type": "text", "content": content,
                        "mentions": [{"key": "@_user_1", "id": {"open_id": "ou_bot"},
                                      "name": "workmate", "tenant_key": TENANT_KEY}]}
        }
    })
    .to_string()
}

fn click(event_id: &str, user: &str, value: &Value) -> String {
    json!({
        "schema": "2.0",
        "header": {"event_id": event_id, "event_type": "card.action.trigger",
                   "create_time": "1700000000000", "token": TOKEN, "app_id": "cli_test",
                   "tenant_key": TENANT_KEY},
        "event": {
            "operator": {"tenant_key": TENANT_KEY, "open_id": user, "union_id": "on_x"},
            "token": "c-delayed-update-token",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": "om_sent_1", "open_chat_id": CHAT}
        }
    })
    .to_string()
}

/// The card JSON a CardKit create or full update carried.
fn card_of(call: &Call) -> Value {
    let data = call.body["data"]
        .as_str()
        .or_else(|| call.body["card"]["data"].as_str())
        .unwrap_or("null");
    serde_json::from_str(data).unwrap()
}

/// The "Approve once" button value of `item`, once a created card carries it (the approval
/// card's; the turn card, which may show the call too, is created first).
async fn approve_once(app: &FeishuApp, item: &InboxItem) -> Value {
    let find = |calls: &[Call]| -> Option<Value> {
        calls
            .iter()
            .filter(|c| c.method == "POST")
            .flat_map(|c| button_values(&card_of(c)))
            .find(|v| v.to_string().contains(item.id.as_str()) && v.to_string().contains("once"))
    };
    let created = wait_for(
        &app.fake,
        "/open-apis/cardkit/v1/cards",
        "the approval card",
        |calls| find(calls).is_some(),
    )
    .await;
    find(&created).unwrap_or_default()
}

/// Every button value of a card.
fn button_values(card: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    collect_buttons(card, &mut out);
    out
}

fn collect_buttons(value: &Value, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            if map.get("tag").and_then(Value::as_str) == Some("button") {
                for behavior in map
                    .get("behaviors")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.push(behavior["value"].clone());
                }
            }
            map.values().for_each(|v| collect_buttons(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_buttons(v, out)),
        _ => {}
    }
}

async fn parked(app: &FeishuApp) -> InboxItem {
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    eventually("the approval parked in the inbox", PATIENCE, || async {
        app.store
            .inbox()
            .list(&tenant, &InboxFilter::default(), 10)
            .await
            .unwrap()
            .into_iter()
            .next()
    })
    .await
}

#[tokio::test]
async fn url_verification_is_answered_encrypted_or_plain_and_a_bad_signature_is_refused() {
    let app = feishu_app(SHELL).await;
    let handshake =
        json!({"challenge": "ch-1", "token": TOKEN, "type": "url_verification"}).to_string();
    let sealed = crypto::encrypt_with(ENCRYPT_KEY, [9; 16], &handshake);
    // Feishu sends the handshake unsigned.
    let (status, answer) = send(&app, "events", &json!({"encrypt": sealed}).to_string(), "").await;
    assert_eq!(
        (status, answer),
        (StatusCode::OK, json!({"challenge": "ch-1"}))
    );
    let now = crate::support::unix_now_s();
    let signature = crypto::signature(&now, "nonce-1", ENCRYPT_KEY, handshake.as_bytes());
    let (status, answer) = send_at(&app, "events", &handshake, &signature, &now).await;
    assert_eq!(
        (status, answer),
        (StatusCode::OK, json!({"challenge": "ch-1"}))
    );
    let (status, _) = send(&app, "events", &mention("Ev0", "hi"), "0000").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let wrong_token = handshake.replace(TOKEN, "guess");
    let sealed = crypto::encrypt_with(ENCRYPT_KEY, [9; 16], &wrong_token);
    let (status, _) = send(&app, "events", &json!({"encrypt": sealed}).to_string(), "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_encrypted_mention_streams_a_cardkit_answer_with_growing_sequences() {
    let app = feishu_app(STREAMED).await;
    let (status, _) = post(&app, "events", &mention("Ev1", "count to ten")).await;
    assert_eq!(status, StatusCode::OK);
    let seen = wait_for(
        &app.fake,
        "/open-apis/cardkit/v1/cards",
        "the answer ends",
        // Streaming is closed (PATCH) and then the whole card replaced (PUT): a PUT with the
        // full text can also come before the close, while the card still streams.
        |calls| {
            calls
                .iter()
                .position(|c| c.method == "PATCH")
                .is_some_and(|closed| {
                    calls[closed..]
                        .iter()
                        .any(|c| c.method == "PUT" && card_of(c).to_string().contains("ten"))
                })
        },
    )
    .await;
    // The card was created streaming, and sent as a reply in the mention's thread.
    assert!(
        card_of(&seen[0])["config"]["streaming_mode"]
            .as_bool()
            .unwrap(),
        "{seen:#?}"
    );
    let replies = calls(
        &app.fake,
        &format!("/open-apis/im/v1/messages/{ROOT}/reply"),
    )
    .await;
    assert!(!replies.is_empty());
    assert!(
        replies
            .iter()
            .all(|r| r.body["reply_in_thread"] == true
                && !r.body["uuid"].as_str().unwrap().is_empty())
    );
    // The text streamed into its element, then streaming closed; every sequence of the card
    // grows strictly.
    let card_id = "card_1";
    let updates: Vec<&Call> = seen
        .iter()
        .filter(|c| c.path.contains(card_id) && c.method != "POST")
        .collect();
    let streamed = updates
        .iter()
        .filter(|c| c.path.ends_with("/content"))
        .count();
    assert!(streamed >= 1, "no element streaming: {updates:#?}");
    let sequences: Vec<i64> = updates
        .iter()
        .map(|c| c.body["sequence"].as_i64().unwrap())
        .collect();
    assert!(
        sequences.windows(2).all(|w| w[0] < w[1]),
        "sequences {sequences:?}"
    );
    let last = updates.last().unwrap();
    assert_eq!(last.method, "PUT");
    assert!(
        !card_of(last)["config"]["streaming_mode"]
            .as_bool()
            .unwrap_or(false)
    );
}

#[tokio::test]
async fn an_approver_click_gets_toast_and_card_at_once_and_a_stranger_changes_nothing() {
    let app = feishu_app(SHELL).await;
    let (status, _) = post(&app, "events", &mention("Ev1", "run it")).await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;
    let approve = &approve_once(&app, &item).await;

    // A stranger's click: an error toast, no card, the item still pending.
    let (status, answer) = post(&app, "card", &click("Cb1", "ou_stranger", approve)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["toast"]["type"], "error", "{answer:#}");
    assert!(answer.get("card").is_none());
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    let state = app
        .store
        .inbox()
        .get(&tenant, &item.id)
        .await
        .unwrap()
        .unwrap()
        .state;
    assert_eq!(state, InboxItemState::Pending);

    // The admin approves: toast and updated card within Feishu's 3 s.
    let started = Instant::now();
    let (status, answer) = post(&app, "card", &click("Cb2", "ou_boss", approve)).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["toast"],
        json!({"type": "success", "content": "Approved."})
    );
    assert_eq!(answer["card"]["type"], "raw");
    let card = answer["card"]["data"].to_string();
    assert!(card.contains("Approved by Bo Chen"), "{card}");
    assert!(
        button_values(&answer["card"]["data"]).is_empty(),
        "buttons left: {card}"
    );

    // Everyone's copy is updated too, and the turn goes on.
    wait_for(
        &app.fake,
        "/open-apis/cardkit/v1/cards/",
        "the shared card shows the approval",
        |calls| {
            calls.iter().any(|c| {
                c.method == "PUT" && card_of(c).to_string().contains("Approved by Bo Chen")
            })
        },
    )
    .await;
    // A second click, by the owner, is told who approved first.
    let (_, answer) = post(&app, "card", &click("Cb3", "ou_ana", approve)).await;
    assert_eq!(answer["toast"]["type"], "warning", "{answer:#}");
    assert_eq!(answer["toast"]["content"], "Already approved by Bo Chen.");
}

#[tokio::test]
async fn a_retried_event_runs_one_turn() {
    let app = feishu_app(SHELL).await;
    for _ in 0..3 {
        let (status, _) = post(&app, "events", &mention("Ev-retried", "run it")).await;
        assert_eq!(status, StatusCode::OK);
    }
    parked(&app).await;
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    let session = thread_session(&app.store, Surface::Feishu, TENANT_KEY, CHAT, ROOT)
        .await
        .unwrap();
    let events = app
        .store
        .events()
        .list_after(&tenant, &session.id, 0, 1000)
        .await
        .unwrap();
    let turns = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TurnStart { .. }))
        .count();
    assert_eq!(turns, 1, "one turn for three deliveries of one event");
}

/// Feishu's `im.message.recalled_v1` for `message_id`.
fn recalled(event_id: &str, message_id: &str) -> String {
    json!({
        "schema": "2.0",
        "header": {"event_id": event_id, "event_type": "im.message.recalled_v1",
                   "create_time": "1700000000000", "token": TOKEN, "app_id": "cli_test",
                   "tenant_key": TENANT_KEY},
        "event": {"message_id": message_id, "chat_id": CHAT, "recall_time": "1700000001000",
                  "recall_type": "message_owner"}
    })
    .to_string()
}

#[tokio::test]
async fn recalling_a_message_stops_the_turn_it_started_and_the_thread_is_told() {
    let words: Vec<String> = (1..=400).map(|i| format!("w{i}")).collect();
    let script = json!({"conversations": [{"when": "*", "turns": [
        {"text": words.join(" "), "chunk_delay_ms": 20}]}]})
    .to_string();
    let app = feishu_app(&script).await;
    let (status, _) = post(&app, "events", &mention("EvLong", "write a long report")).await;
    assert_eq!(status, StatusCode::OK);
    let session = eventually("the thread's session", PATIENCE, || {
        thread_session(&app.store, Surface::Feishu, TENANT_KEY, CHAT, ROOT)
    })
    .await;
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    eventually("the long answer's turn running", PATIENCE, || async {
        app.state
            .hub
            .is_running(&tenant, &session.id)
            .await
            .unwrap()
            .then_some(())
    })
    .await;

    // Ana recalls her message while the answer streams: the turn stops.
    let (status, _) = post(&app, "events", &recalled("EvRecall", ROOT)).await;
    assert_eq!(status, StatusCode::OK);
    eventually(
        "the recalled message stopping the turn",
        PATIENCE,
        || async {
            let events = app
                .store
                .events()
                .list_after(&tenant, &session.id, 0, 1000)
                .await
                .unwrap();
            events
                .iter()
                .any(|e| matches!(e.kind, EventKind::Interrupted { .. }))
                .then_some(())
        },
    )
    .await;
    wait_for(
        &app.fake,
        "/open-apis/im/v1/messages",
        "the notice",
        |calls| {
            calls
                .iter()
                .any(|c| c.body.to_string().contains("was recalled"))
        },
    )
    .await;
    // The same recall again finds nothing left to do.
    let (status, _) = post(&app, "events", &recalled("EvRecall2", ROOT)).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn an_approver_gets_a_copy_in_a_direct_message_and_answers_from_it() {
    let app = feishu_app(SHELL).await;
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    crate::support::separation_of_duties(&app.store, &tenant).await;
    crate::support::approver_on(&app.store, &tenant, "feishu", "ou_cara", "Cara").await;
    let (status, _) = post(&app, "events", &mention("EvCopy", "run it")).await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;
    // The copy is sent to Cara herself (by open_id), as a card with the buttons.
    let sent = wait_for(
        &app.fake,
        "/open-apis/im/v1/messages",
        "the copy",
        |calls| calls.iter().any(|c| c.body["receive_id"] == "ou_cara"),
    )
    .await;
    assert!(
        sent.iter()
            .all(|c| c.body["receive_id"] != "ou_ana" || !c.path.contains("open_id")),
        "no copy to the person who asked"
    );
    let created = calls(&app.fake, "/open-apis/cardkit/v1/cards").await;
    let approve = created
        .iter()
        .filter(|c| c.method == "POST")
        .flat_map(|c| button_values(&card_of(c)))
        .find(|v| v.to_string().contains(item.id.as_str()) && v.to_string().contains("once"))
        .unwrap();
    // Ana may not approve her own command (separation of duties); Cara's click wins.
    let (_, refused) = post(&app, "card", &click("CbAna", "ou_ana", &approve)).await;
    assert_eq!(refused["toast"]["type"], "error", "{refused:#}");
    let (_, answer) = post(&app, "card", &click("CbCara", "ou_cara", &approve)).await;
    assert_eq!(answer["toast"]["type"], "success", "{answer:#}");
    // Her copy, a card of its own, then says who approved, as the thread's card does.
    let copy = sent
        .iter()
        .find(|c| c.body["receive_id"] == "ou_cara")
        .unwrap();
    let content: Value = serde_json::from_str(copy.body["content"].as_str().unwrap()).unwrap();
    let copy_card = content["data"]["card_id"].as_str().unwrap().to_owned();
    wait_for(
        &app.fake,
        "/open-apis/cardkit/v1/cards",
        "the copy updated",
        |calls| {
            calls.iter().any(|c| {
                c.method == "PUT"
                    && c.path.contains(&copy_card)
                    && c.body.to_string().contains("Approved by Cara")
            })
        },
    )
    .await;
    eventually("the inbox item's new state", PATIENCE, || async {
        let state = app
            .store
            .inbox()
            .get(&tenant, &item.id)
            .await
            .unwrap()?
            .state;
        (state == InboxItemState::Resolved).then_some(())
    })
    .await;
}
