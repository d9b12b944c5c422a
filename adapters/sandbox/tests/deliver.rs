//! Saying and clicking reach workmate as signed Slack requests.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::{SECRET, get, post as post_json, sandbox};

/// A request workmate received: its path, content type and body.
#[derive(Debug)]
struct Received {
    path: &'static str,
    content_type: String,
    body: Bytes,
}

type Tx = mpsc::Sender<Received>;

fn verify(headers: &HeaderMap, body: &[u8]) -> bool {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    workmate_slack::verify_request(
        SECRET.as_bytes(),
        header("x-slack-request-timestamp"),
        header("x-slack-signature"),
        body,
        i64::try_from(now).unwrap(),
    )
    .is_ok()
}

async fn record(path: &'static str, tx: &Tx, headers: &HeaderMap, body: Bytes) -> StatusCode {
    if !verify(headers, &body) {
        return StatusCode::UNAUTHORIZED;
    }
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    tx.send(Received {
        path,
        content_type,
        body,
    })
    .await
    .unwrap();
    StatusCode::OK
}

/// A stand-in for workmate's Slack routes that accepts only correctly signed requests.
async fn recording_workmate() -> (String, mpsc::Receiver<Received>) {
    let (tx, rx) = mpsc::channel(8);
    let app = Router::new()
        .route(
            "/v1/platforms/slack/events",
            post(
                |State(tx): State<Tx>, headers: HeaderMap, body: Bytes| async move {
                    record("events", &tx, &headers, body).await
                },
            ),
        )
        .route(
            "/v1/platforms/slack/interactions",
            post(
                |State(tx): State<Tx>, headers: HeaderMap, body: Bytes| async move {
                    record("interactions", &tx, &headers, body).await
                },
            ),
        )
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), rx)
}

#[tokio::test]
async fn say_sends_a_signed_app_mention_and_shows_the_message() {
    let (base, mut rx) = recording_workmate().await;
    let app = sandbox(&base);
    let (status, answer) = post_json(
        &app,
        "/sandbox/say",
        None,
        &json!({"user": "U1", "text": "write the report"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let received = rx.recv().await.unwrap();
    assert_eq!(received.path, "events");
    assert_eq!(received.content_type, "application/json");
    let envelope = workmate_slack::decode_event_envelope(&received.body).unwrap();
    let workmate_slack::EventEnvelope::EventCallback(callback) = envelope else {
        panic!("not an event_callback: {envelope:?}");
    };
    assert_eq!(callback.team_id.as_deref(), Some("TSANDBOX"));
    let first_id = callback.event_id.clone().unwrap();
    let workmate_slack::Event::AppMention(message) = &callback.event else {
        panic!("not an app_mention: {:?}", callback.event);
    };
    assert_eq!(message.user.as_deref(), Some("U1"));
    assert_eq!(message.text, "<@UBOT> write the report");
    assert_eq!(message.channel.as_deref(), Some("CGENERAL"));
    assert_eq!(message.thread_ts, None);
    let root = message.ts.clone();

    // A reply in the thread: same thread, a new event id.
    let (status, _) = post_json(
        &app,
        "/sandbox/say",
        None,
        &json!({"user": "U2", "text": "and add risks", "thread_ts": root}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let received = rx.recv().await.unwrap();
    let body: Value = serde_json::from_slice(&received.body).unwrap();
    assert_eq!(body["event"]["thread_ts"], root.as_str());
    assert_eq!(body["event"]["user"], "U2");
    assert_ne!(body["event_id"], first_id.as_str());

    let (_, _, state) = get(&app, "/sandbox/state").await;
    let state: Value = serde_json::from_str(&state).unwrap();
    let messages = &state["channels"][0]["threads"][0]["messages"];
    assert_eq!(messages[0]["user"], "U1");
    assert_eq!(messages[0]["ts"], root.as_str());
    assert_eq!(messages[1]["text"], "<@UBOT> and add risks");
}

#[tokio::test]
async fn click_sends_a_signed_form_encoded_block_actions() {
    let (base, mut rx) = recording_workmate().await;
    let app = sandbox(&base);
    let (_, posted) = post_json(
        &app,
        "/sandbox/api/chat.postMessage",
        Some(crate::support::TOKEN),
        &json!({"channel": "CGENERAL", "text": "Approve?", "blocks": [
            {"type": "actions", "block_id": "b1", "elements": [
                {"type": "button", "action_id": "wm_0", "value": "v+1 & more", "text": {"type": "plain_text", "text": "Approve"}}
            ]}
        ]}),
    )
    .await;
    let ts = posted["ts"].as_str().unwrap();
    let (status, answer) = post_json(
        &app,
        "/sandbox/click",
        None,
        &json!({"user": "U2", "channel": "CGENERAL", "message_ts": ts, "action_id": "wm_0", "value": "v+1 & more"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let received = rx.recv().await.unwrap();
    assert_eq!(received.path, "interactions");
    assert_eq!(received.content_type, "application/x-www-form-urlencoded");
    assert!(received.body.starts_with(b"payload="));
    let workmate_slack::Interaction::BlockActions(actions) =
        workmate_slack::decode_interaction(&received.body).unwrap()
    else {
        panic!("not block_actions");
    };
    assert_eq!(actions.user.id, "U2");
    assert_eq!(actions.user.name.as_deref(), Some("Bob"));
    assert_eq!(actions.team_id(), Some("TSANDBOX"));
    assert_eq!(actions.channel_id(), Some("CGENERAL"));
    assert_eq!(actions.message_ts(), Some(ts));
    assert_eq!(actions.actions.len(), 1);
    assert_eq!(actions.actions[0].action_id, "wm_0");
    assert_eq!(actions.actions[0].value.as_deref(), Some("v+1 & more"));
    assert_eq!(actions.actions[0].block_id.as_deref(), Some("b1"));
}

#[tokio::test]
async fn an_unknown_user_is_refused_and_nothing_is_sent() {
    let (base, mut rx) = recording_workmate().await;
    let app = sandbox(&base);
    let (status, _) = post_json(
        &app,
        "/sandbox/say",
        None,
        &json!({"user": "U9", "text": "hi"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn a_refusal_by_workmate_is_reported() {
    let (base, _rx) = recording_workmate().await;
    let mut config = crate::support::config(&base);
    config.slack.signing_secret = "another-secret".into();
    let app = workmate_sandbox::router(config).unwrap();
    let (status, answer) = post_json(
        &app,
        "/sandbox/say",
        None,
        &json!({"user": "U1", "text": "hi"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer["status"], 401);
}
