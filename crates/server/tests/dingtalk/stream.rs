//! Stream mode: the test gateway delivers robot messages and card clicks over the WebSocket
//! workmate opened, and checks the acks.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tower::ServiceExt;
use workmate_store::InboxItemState;

use super::fake::{TOPIC_CARD, TOPIC_ROBOT, acked, frame, next_text};
use super::{
    CLIENT_ID, CLIENT_SECRET, SHELL, TWO_ANSWERS, answered, approval_card, click, dingtalk_app,
    item_state, parked, robot_message, serve, turn_inputs, turns, unserved, updated_for_everyone,
};
use crate::support::{Call, PATIENCE, calls, eventually, wait_for};

/// The whole approval over the Stream connection: the message is acked once stored, the card
/// is created in the group, a stranger's click changes nothing, the admin's click is answered
/// with the decided card data within 2 s and the card is then updated for everyone.
#[tokio::test]
async fn over_the_stream_a_message_and_an_approval_click_are_acked_and_the_card_updated_for_everyone()
 {
    let app = dingtalk_app(SHELL, |c| c).await;
    let mut ws = app.fake.accept().await;
    let opened = super::super::support::calls(&app.fake.api, super::fake::OPEN).await;
    assert_eq!(opened[0].body["clientId"], CLIENT_ID);
    assert_eq!(opened[0].body["clientSecret"], CLIENT_SECRET);

    ws.send(frame(
        "CALLBACK",
        TOPIC_ROBOT,
        "m-1",
        &robot_message("msg-1", "run it"),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(acked(&ack, "m-1"), json!({}));
    // Acked only once durable: the delivery is in the chat layer's intake.
    let key = workmate_store::IntakeKey {
        tenant_id: workmate_chat::tenant_of(workmate_protocol::Surface::Dingtalk, super::CORP),
        platform: "dingtalk".into(),
        delivery_id: "msg-1".into(),
    };
    assert!(app.store.intake().get(&key).await.unwrap().is_some());

    let item = parked(&app).await;
    let (out_track_id, created) = approval_card(&app, &item).await;
    assert_eq!(created.body["callbackType"], "STREAM", "{:#}", created.body);

    // A stranger's click: answered, for the stranger alone, with why; the item stays pending.
    ws.send(frame(
        "CALLBACK",
        TOPIC_CARD,
        "c-1",
        &click(&out_track_id, "stranger", "once"),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    let refused = acked(&ack, "c-1");
    let params = &refused["cardData"]["cardParamMap"];
    assert!(
        params["detail"].to_string().contains("⛔ Only"),
        "{refused:#}"
    );
    assert!(params.get("status").is_none(), "{refused:#}");
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);

    // The admin approves: the ack carries the decided card for the clicker, within 2 s.
    let started = Instant::now();
    ws.send(frame(
        "CALLBACK",
        TOPIC_CARD,
        "c-2",
        &click(&out_track_id, "boss", "once"),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let answer = acked(&ack, "c-2");
    let params = &answer["cardData"]["cardParamMap"];
    assert_eq!(params["status"], "approved", "{answer:#}");
    assert!(
        params["approver"].as_str().unwrap().contains("boss"),
        "{answer:#}"
    );
    assert_ne!(item_state(&app, &item).await, InboxItemState::Pending);

    // Then for everyone: the shared card data, not only the clicker's view.
    let update = updated_for_everyone(&app, &out_track_id, "approved").await;
    assert!(
        update["cardData"]["cardParamMap"]["approver"]
            .as_str()
            .unwrap()
            .contains("boss"),
        "{update:#}"
    );
    // The turn goes on to its answer, and the answer card leaves "writing" (finished).
    wait_for(
        &app.fake.api,
        "/v1.0/card/instances",
        "the answer card finished",
        |calls| {
            calls.iter().any(|c| {
                let params = &c.body["cardData"]["cardParamMap"];
                c.method == "PUT"
                    && params["flowStatus"] == "3"
                    && params["content"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("Done.")
            })
        },
    )
    .await;

    // An event is acknowledged (and not acted on).
    ws.send(frame(
        "EVENT",
        "chat_update_title",
        "e-1",
        &json!({"title": "Ops"}),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack["headers"]["messageId"], "e-1", "{ack}");
    let data: serde_json::Value = serde_json::from_str(ack["data"].as_str().unwrap()).unwrap();
    assert_eq!(data["status"], "SUCCESS", "{ack}");

    // The same click delivered again (its frame redelivered) is acked and changes nothing.
    ws.send(frame(
        "CALLBACK",
        TOPIC_CARD,
        "c-2",
        &click(&out_track_id, "boss", "once"),
    ))
    .await
    .unwrap();
    let again = acked(&next_text(&mut ws).await, "c-2");
    assert_ne!(
        again["cardData"]["cardParamMap"]["status"], "pending",
        "{again:#}"
    );
    assert_eq!(turns(&app).await, 1);
    // One access token served every call (cached, not fetched per call).
    assert_eq!(
        calls(&app.fake.api, "/v1.0/oauth2/accessToken").await.len(),
        1
    );
    app.surface.shutdown().await;
}

/// A streamed answer is coalesced: far fewer card updates than the model's deltas (every call
/// counts against the app's QPS and monthly quota), and the last one has the whole answer.
#[tokio::test]
async fn a_streamed_answer_is_coalesced_into_few_card_updates() {
    let words: Vec<String> = (1..=40).map(|i| format!("w{i:02}")).collect();
    let script = json!({"conversations": [{"when": "*", "turns": [
        {"text": words.join(" "), "chunk_delay_ms": 10}]}]})
    .to_string();
    let app = dingtalk_app(&script, |c| c).await;
    let mut ws = app.fake.accept().await;
    ws.send(frame(
        "CALLBACK",
        TOPIC_ROBOT,
        "m-s",
        &robot_message("msg-s", "count"),
    ))
    .await
    .unwrap();
    assert_eq!(acked(&next_text(&mut ws).await, "m-s"), json!({}));
    let finished = |c: &Call| {
        c.body["cardData"]["cardParamMap"]["flowStatus"] == "3"
            && c.body.to_string().contains("w40")
    };
    wait_for(
        &app.fake.api,
        "/v1.0/card/instances",
        "the finished answer",
        |calls| calls.iter().any(finished),
    )
    .await;
    let streamed = calls(&app.fake.api, "/v1.0/card/streaming").await;
    assert!(
        streamed.len() < words.len() / 2,
        "{} streaming updates for {} deltas",
        streamed.len(),
        words.len()
    );
    let last = streamed.last().unwrap();
    assert_eq!(last.body["isFull"], true, "{:#}", last.body);
    assert!(
        last.body["content"]
            .as_str()
            .unwrap()
            .contains(&words.join(" ")),
        "{:#}",
        last.body
    );
    app.surface.shutdown().await;
}

/// The Stream connection runs under the app's lease: once the replica that held it lets go,
/// this one connects holding the lease, and on shutdown closes the connection and releases the
/// lease for the next.
#[tokio::test]
async fn the_stream_connection_is_held_under_the_apps_lease() {
    let (app, fake) = unserved(SHELL).await;
    let lease = format!("dingtalk:{CLIENT_ID}");
    let leases = || app.store.connection_leases();
    let until = app.store.clock_ms() + 60_000;
    assert!(
        leases()
            .take(&lease, "replica-b", until)
            .await
            .unwrap()
            .is_some()
    );
    let store = app.store.clone();
    let app = serve(app, fake, |c| c);
    store
        .connection_leases()
        .release(&lease, "replica-b")
        .await
        .unwrap();

    let mut ws = app.fake.accept().await;
    let held = store
        .connection_leases()
        .get(&lease)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.holder, "local");
    assert!(held.until_ms > store.clock_ms(), "{held:?}");
    assert_eq!(app.fake.opens().await, 1);

    app.surface.shutdown().await;
    let released = store
        .connection_leases()
        .get(&lease)
        .await
        .unwrap()
        .unwrap();
    assert!(released.until_ms <= store.clock_ms(), "{released:?}");
    // The socket was closed.
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the connection was not closed");
}

/// DingTalk pushes an unacked (or slowly acked) message again with the same ids: every copy is
/// acked, and it runs one turn; the next message runs the next.
#[tokio::test]
async fn redelivered_frames_are_acked_and_run_one_turn() {
    let app = dingtalk_app(TWO_ANSWERS, |c| c).await;
    let mut ws = app.fake.accept().await;
    let message = robot_message("msg-dup", "hello");
    for _ in 0..3 {
        ws.send(frame("CALLBACK", TOPIC_ROBOT, "m-dup", &message))
            .await
            .unwrap();
        let ack = next_text(&mut ws).await;
        assert_eq!(acked(&ack, "m-dup"), json!({}));
    }
    answered(&app, "First answer.").await;
    ws.send(frame(
        "CALLBACK",
        TOPIC_ROBOT,
        "m-next",
        &robot_message("msg-next", "and again"),
    ))
    .await
    .unwrap();
    assert_eq!(acked(&next_text(&mut ws).await, "m-next"), json!({}));
    answered(&app, "Second answer.").await;
    assert_eq!(turn_inputs(&app, 2).await, ["hello", "and again"]);
    app.surface.shutdown().await;
}

/// The gateway drops the connection: workmate opens a new one (a new `open`, for a new
/// ticket), and messages flow over it.
#[tokio::test]
async fn a_dropped_connection_reconnects() {
    let app = dingtalk_app(SHELL, |c| c).await;
    let ws = app.fake.accept().await;
    assert_eq!(app.fake.opens().await, 1);
    drop(ws);

    let mut ws = app.fake.accept().await;
    assert_eq!(app.fake.opens().await, 2);
    ws.send(frame(
        "CALLBACK",
        TOPIC_ROBOT,
        "m-2",
        &robot_message("msg-2", "run it"),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(acked(&ack, "m-2"), json!({}));
    parked(&app).await;
    app.surface.shutdown().await;
}

/// In Stream mode the HTTP callback routes are off, even for a correctly signed request: only
/// the connection delivers.
#[tokio::test]
async fn in_stream_mode_the_http_callback_routes_refuse() {
    let app = dingtalk_app(SHELL, |c| c).await;
    let timestamp = super::http::now_ms().to_string();
    let sign = workmate_dingtalk::sign::robot_sign(CLIENT_SECRET, &timestamp);
    let request = Request::builder()
        .method("POST")
        .uri("/v1/platforms/dingtalk/robot")
        .header("content-type", "application/json")
        .header("timestamp", &timestamp)
        .header("sign", &sign)
        .body(Body::from(robot_message("msg-h", "run it").to_string()))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // The connection does deliver.
    let mut ws = app.fake.accept().await;
    ws.send(frame(
        "CALLBACK",
        TOPIC_ROBOT,
        "m-3",
        &robot_message("msg-3", "run it"),
    ))
    .await
    .unwrap();
    assert_eq!(acked(&next_text(&mut ws).await, "m-3"), json!({}));
    eventually("one turn", PATIENCE, || async {
        (turns(&app).await == 1).then_some(())
    })
    .await;
    app.surface.shutdown().await;
}
