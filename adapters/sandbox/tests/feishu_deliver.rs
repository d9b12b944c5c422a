//! Saying and clicking on the Feishu side reach workmate as Feishu sends them: encrypted,
//! signed schema 2.0 events and card callbacks; a callback's answer updates the card.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use workmate_feishu::crypto;
use workmate_feishu::inbound::{Envelope, Event, decode, message_text};
use workmate_sandbox::feishu::{BOT_OPEN_ID, CHAT_ID, TENANT_KEY, USERS};

use crate::support::{
    APP_ID, APP_SECRET, ENCRYPT_KEY, VERIFICATION_TOKEN, get, post as post_json, sandbox,
};

const OPEN: &str = "/sandbox/feishu/open-apis";
const ALICE: &str = USERS[0].0;
const BOB: &str = USERS[1].0;

/// A delivery workmate received: its route and its decrypted plaintext.
#[derive(Debug)]
struct Received {
    route: &'static str,
    plaintext: Value,
}

#[derive(Clone)]
struct Stub {
    tx: mpsc::Sender<Received>,
    /// What the card route answers.
    card_answer: Arc<Value>,
}

/// Verifies the signature and decrypts the body, as workmate does; `None` when either fails.
fn open(headers: &HeaderMap, body: &[u8]) -> Option<Value> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    crypto::verify(
        header("x-lark-request-timestamp"),
        header("x-lark-request-nonce"),
        ENCRYPT_KEY,
        body,
        header("x-lark-signature"),
    )
    .ok()?;
    let outer: Value = serde_json::from_slice(body).ok()?;
    let plaintext = crypto::decrypt(ENCRYPT_KEY, outer["encrypt"].as_str()?).ok()?;
    serde_json::from_str(&plaintext).ok()
}

async fn record(
    route: &'static str,
    stub: &Stub,
    headers: &HeaderMap,
    body: &[u8],
) -> (StatusCode, Value) {
    let Some(plaintext) = open(headers, body) else {
        return (StatusCode::UNAUTHORIZED, Value::Null);
    };
    stub.tx.send(Received { route, plaintext }).await.unwrap();
    let answer = if route == "card" {
        (*stub.card_answer).clone()
    } else {
        json!({})
    };
    (StatusCode::OK, answer)
}

/// A stand-in for workmate's Feishu routes that takes only correctly signed, encrypted requests
/// and answers card callbacks with `card_answer`.
async fn recording_workmate(card_answer: Value) -> (String, mpsc::Receiver<Received>) {
    let (tx, rx) = mpsc::channel(8);
    let stub = Stub {
        tx,
        card_answer: Arc::new(card_answer),
    };
    let app = Router::new()
        .route(
            "/v1/platforms/feishu/events",
            post(
                |State(stub): State<Stub>, headers: HeaderMap, body: Bytes| async move {
                    let (status, answer) = record("events", &stub, &headers, &body).await;
                    (status, axum::Json(answer))
                },
            ),
        )
        .route(
            "/v1/platforms/feishu/card",
            post(
                |State(stub): State<Stub>, headers: HeaderMap, body: Bytes| async move {
                    let (status, answer) = record("card", &stub, &headers, &body).await;
                    (status, axum::Json(answer))
                },
            ),
        )
        .with_state(stub);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), rx)
}

async fn feishu_state(app: &Router) -> Value {
    let (_, _, state) = get(app, "/sandbox/feishu/state").await;
    serde_json::from_str(&state).unwrap()
}

#[tokio::test]
async fn say_sends_an_encrypted_signed_mention_of_the_bot() {
    let (base, mut rx) = recording_workmate(json!({})).await;
    let app = sandbox(&base);
    let (status, answer) = post_json(
        &app,
        "/sandbox/feishu/say",
        None,
        &json!({"user": ALICE, "text": "write the report"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let received = rx.recv().await.unwrap();
    assert_eq!(received.route, "events");
    let header = &received.plaintext["header"];
    assert_eq!(header["event_type"], "im.message.receive_v1");
    assert_eq!(header["token"], VERIFICATION_TOKEN);
    assert_eq!(header["app_id"], APP_ID);
    let first_id = header["event_id"].as_str().unwrap().to_owned();
    let plaintext = received.plaintext.to_string();
    let Envelope::Event {
        meta,
        event: Event::Message(message),
    } = decode(plaintext.as_bytes()).unwrap()
    else {
        panic!("not a message event: {}", received.plaintext);
    };
    assert_eq!(meta.tenant_key.as_deref(), Some(TENANT_KEY));
    assert_eq!(message.sender.sender_id.open_id.as_deref(), Some(ALICE));
    assert_eq!(message.sender.sender_type, "user");
    let root = message.message.message_id.to_string();
    assert_eq!(message.message.chat_id, CHAT_ID);
    assert_eq!(message.message.chat_type, "group");
    assert_eq!(message.message.thread_root(), root);
    assert_eq!(
        message.message.mentions[0].id.open_id.as_deref(),
        Some(BOT_OPEN_ID)
    );
    assert_eq!(
        message_text(&message.message, Some(BOT_OPEN_ID)).as_deref(),
        Some("write the report")
    );

    // Bob answers in the thread: the same root, a new event id.
    let (status, _) = post_json(
        &app,
        "/sandbox/feishu/say",
        None,
        &json!({"user": BOB, "text": "@workmate and add risks", "thread_ts": root}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let received = rx.recv().await.unwrap();
    let event = &received.plaintext["event"];
    assert_eq!(event["message"]["root_id"], root.as_str());
    assert_eq!(event["sender"]["sender_id"]["open_id"], BOB);
    assert_ne!(received.plaintext["header"]["event_id"], first_id.as_str());
    assert_eq!(
        event["message"]["content"],
        json!({"text": "@_user_1 and add risks"}).to_string()
    );

    let state = feishu_state(&app).await;
    let messages = &state["channels"][0]["threads"][0]["messages"];
    assert_eq!(messages[0]["ts"], root.as_str());
    assert_eq!(messages[0]["text"], "@workmate write the report");
    assert_eq!(messages[1]["user"], BOB);
    assert_eq!(messages[1]["thread_ts"], root.as_str());
}

/// The approval card workmate would post, as a card entity in the chat; its message id and
/// card id.
async fn posted_card(app: &Router) -> (String, String) {
    let (_, token) = post_json(
        app,
        &format!("{OPEN}/auth/v3/tenant_access_token/internal"),
        None,
        &json!({"app_id": APP_ID, "app_secret": APP_SECRET}),
    )
    .await;
    let token = token["tenant_access_token"].as_str().unwrap().to_owned();
    let card = json!({"schema": "2.0", "config": {"update_multi": true},
        "header": {"title": {"tag": "plain_text", "content": "Approve write_file?"}},
        "body": {"elements": [
            {"tag": "markdown", "element_id": "e0", "content": "Save weekly-report.md"},
            {"tag": "column_set", "element_id": "r0", "columns": [{"tag": "column", "element_id": "r0c0", "elements": [
                {"tag": "button", "element_id": "b0", "text": {"tag": "plain_text", "content": "Approve once"},
                 "behaviors": [{"type": "callback", "value": {"a": "approve", "item": "i-1"}}]}]}]}]}});
    let (_, created) = post_json(
        app,
        &format!("{OPEN}/cardkit/v1/cards"),
        Some(&token),
        &json!({"type": "card_json", "data": card.to_string()}),
    )
    .await;
    let card_id = created["data"]["card_id"].as_str().unwrap().to_owned();
    let (_, sent) = post_json(
        app,
        &format!("{OPEN}/im/v1/messages?receive_id_type=chat_id"),
        Some(&token),
        &json!({"receive_id": CHAT_ID, "msg_type": "interactive",
                "content": json!({"type": "card", "data": {"card_id": card_id}}).to_string()}),
    )
    .await;
    (
        sent["data"]["message_id"].as_str().unwrap().to_owned(),
        card_id,
    )
}

#[tokio::test]
async fn click_sends_the_buttons_callback_and_applies_workmates_answer() {
    let resolved = json!({"schema": "2.0", "config": {"update_multi": true},
        "body": {"elements": [{"tag": "markdown", "element_id": "e0", "content": "Approved by Bob · once"}]}});
    let (base, mut rx) = recording_workmate(json!({
        "toast": {"type": "success", "content": "Approved."},
        "card": {"type": "raw", "data": resolved},
    }))
    .await;
    let app = sandbox(&base);
    let (message_id, card_id) = posted_card(&app).await;

    let (status, answer) = post_json(
        &app,
        "/sandbox/feishu/click",
        None,
        &json!({"user": BOB, "message_id": message_id, "button": "b0"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["toast"],
        json!({"type": "success", "content": "Approved."})
    );
    let received = rx.recv().await.unwrap();
    assert_eq!(received.route, "card");
    assert_eq!(
        received.plaintext["header"]["event_type"],
        "card.action.trigger"
    );
    assert_eq!(received.plaintext["header"]["token"], VERIFICATION_TOKEN);
    let plaintext = received.plaintext.to_string();
    let Envelope::Event {
        event: Event::CardAction(action),
        ..
    } = decode(plaintext.as_bytes()).unwrap()
    else {
        panic!("not a card action: {}", received.plaintext);
    };
    assert_eq!(action.operator.ids.open_id.as_deref(), Some(BOB));
    assert_eq!(action.operator.tenant_key.as_deref(), Some(TENANT_KEY));
    assert_eq!(action.action.value, json!({"a": "approve", "item": "i-1"}));
    assert_eq!(
        action.context.open_message_id.as_deref(),
        Some(message_id.as_str())
    );
    assert_eq!(action.context.open_chat_id.as_deref(), Some(CHAT_ID));

    // The answer's card replaced the card entity, as Feishu applies it.
    let state = feishu_state(&app).await;
    assert_eq!(state["cards"][&card_id], resolved);
}

#[tokio::test]
async fn a_click_answered_without_a_card_leaves_the_card_and_bad_clicks_send_nothing() {
    let (base, mut rx) = recording_workmate(
        json!({"toast": {"type": "warning", "content": "Not yours to approve."}}),
    )
    .await;
    let app = sandbox(&base);
    let (message_id, card_id) = posted_card(&app).await;
    let before = feishu_state(&app).await["cards"][&card_id].clone();

    for bad in [
        json!({"user": ALICE, "message_id": message_id, "button": "e0"}),
        json!({"user": ALICE, "message_id": message_id, "button": "b9"}),
        json!({"user": ALICE, "message_id": "om_nothing", "button": "b0"}),
        json!({"user": "ou_stranger", "message_id": message_id, "button": "b0"}),
    ] {
        let (status, _) = post_json(&app, "/sandbox/feishu/click", None, &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
    assert!(rx.try_recv().is_err());

    let (status, answer) = post_json(
        &app,
        "/sandbox/feishu/click",
        None,
        &json!({"user": ALICE, "message_id": message_id, "button": "b0"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["toast"]["content"], "Not yours to approve.");
    assert_eq!(rx.recv().await.unwrap().route, "card");
    assert_eq!(feishu_state(&app).await["cards"][&card_id], before);
}

#[tokio::test]
async fn a_request_signed_with_another_key_is_refused_by_workmate_and_reported() {
    let (base, mut rx) = recording_workmate(json!({})).await;
    let mut config = crate::support::config(&base);
    config.feishu.encrypt_key = "another-key".into();
    let app = workmate_sandbox::router(config).unwrap();
    let (status, answer) = post_json(
        &app,
        "/sandbox/feishu/say",
        None,
        &json!({"user": ALICE, "text": "hi"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer["status"], 401);
    assert!(rx.try_recv().is_err());
}
