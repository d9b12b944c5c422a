//! Saying and clicking on the DingTalk side reach workmate's HTTP-mode routes as DingTalk posts
//! them (a robot callback signed with `timestamp`/`sign`, a card callback signed with
//! `x-ddpaas-signature`); a click is sent only for a button the stored card shows, and its
//! answer becomes the clicker's view of the card.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use workmate_dingtalk::sign;
use workmate_sandbox::dingtalk::{CONVERSATION_ID, CORP_ID, USERS};

use crate::dingtalk_api::{
    call, dingtalk_state, group_card, messages, pending_params, token as access_token,
};
use crate::support::{
    DINGTALK_CLIENT_ID, DINGTALK_SECRET, DINGTALK_TEMPLATE, post as post_json, sandbox,
};

const ALICE: &str = USERS[0].0;
const BOB: &str = USERS[1].0;

#[derive(Clone)]
struct Stub {
    /// `(route, body)` of every request that verified.
    received: Arc<Mutex<Vec<(&'static str, Value)>>>,
    /// The answer to a card callback.
    card_answer: Value,
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

async fn robot(State(stub): State<Stub>, headers: HeaderMap, body: Bytes) -> Response {
    let checked = sign::verify_callback(
        DINGTALK_SECRET,
        header(&headers, "timestamp"),
        header(&headers, "sign"),
        now_ms(),
    );
    if checked.is_err() {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap();
    stub.received.lock().unwrap().push(("robot", body));
    axum::Json(json!({})).into_response()
}

async fn card(State(stub): State<Stub>, headers: HeaderMap, body: Bytes) -> Response {
    let checked = sign::verify_card_callback(
        DINGTALK_SECRET,
        header(&headers, "x-ddpaas-signature-timestamp"),
        header(&headers, "x-ddpaas-signature"),
    );
    if checked.is_err() {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap();
    stub.received.lock().unwrap().push(("card", body));
    axum::Json(stub.card_answer).into_response()
}

/// workmate's DingTalk routes, checking the signatures; its base URL and what it received.
async fn recording_workmate(
    card_answer: Value,
) -> (String, Arc<Mutex<Vec<(&'static str, Value)>>>) {
    let received = Arc::default();
    let stub = Stub {
        received: Arc::clone(&received),
        card_answer,
    };
    let app = Router::new()
        .route("/v1/platforms/dingtalk/robot", post(robot))
        .route("/v1/platforms/dingtalk/card", post(card))
        .with_state(stub);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), received)
}

#[tokio::test]
async fn a_message_is_a_signed_robot_callback_mentioning_the_robot() {
    let (base, received) = recording_workmate(json!({})).await;
    let app = sandbox(&base);
    let (status, answer) = post_json(
        &app,
        "/sandbox/dingtalk/say",
        None,
        &json!({"user": ALICE, "text": "@workmate  run it"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 1);
    let (route, message) = &received[0];
    assert_eq!(*route, "robot");
    assert_eq!(message["msgtype"], "text");
    assert_eq!(message["text"]["content"], "run it");
    assert_eq!(message["conversationId"], CONVERSATION_ID);
    assert_eq!(message["conversationType"], "2");
    assert_eq!(message["senderStaffId"], ALICE);
    assert_eq!(message["senderNick"], USERS[0].1);
    assert_eq!(message["chatbotCorpId"], CORP_ID);
    assert_eq!(message["isInAtList"], true);
    assert_eq!(message["robotCode"], DINGTALK_CLIENT_ID);
    let shown = messages(&dingtalk_state(&app).await, CONVERSATION_ID);
    assert_eq!(shown[0]["ts"], message["msgId"]);
    assert_eq!(shown[0]["text"], "@workmate run it");

    for bad in [
        json!({"user": "stranger", "text": "hi"}),
        json!({"user": ALICE, "text": "  @workmate "}),
    ] {
        let (status, _) = post_json(&app, "/sandbox/dingtalk/say", None, &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn a_click_sends_the_cards_choice_and_its_answer_is_the_clickers_view() {
    let answer = json!({"cardData": {"cardParamMap": {"status": "approved", "approver": "Alice"}},
                        "cardUpdateOptions": {"updateCardDataByKey": true}});
    let (base, received) = recording_workmate(answer).await;
    let app = sandbox(&base);
    let token = access_token(&app).await;
    let mut card = group_card(DINGTALK_TEMPLATE, "approval_item1", &pending_params());
    // Alice's own private data: her client fills the button's `${click_key}` from it.
    card["privateData"] = json!({ALICE: {"cardParamMap": {"click_key": "alice-key"}}});
    let (status, _) = call(
        &app,
        "POST",
        "/card/instances/createAndDeliver",
        Some(&token),
        &card,
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // A choice the card does not offer, or a card that is not there, sends nothing.
    for bad in [
        json!({"user": ALICE, "card": "approval_item1", "choice": "always_tool"}),
        json!({"user": ALICE, "card": "approval_other", "choice": "once"}),
        json!({"user": "stranger", "card": "approval_item1", "choice": "once"}),
    ] {
        let (status, _) = post_json(&app, "/sandbox/dingtalk/click", None, &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
    assert!(received.lock().unwrap().is_empty());

    let click = json!({"user": ALICE, "card": "approval_item1", "choice": "once"});
    let (status, answer) = post_json(&app, "/sandbox/dingtalk/click", None, &click).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["updated"], true);
    let received = received.lock().unwrap().clone();
    let (route, callback) = &received[0];
    assert_eq!(*route, "card");
    assert_eq!(callback["type"], "actionCallback");
    assert_eq!(callback["outTrackId"], "approval_item1");
    assert_eq!(callback["corpId"], CORP_ID);
    assert_eq!(callback["userId"], ALICE);
    let content: Value = serde_json::from_str(callback["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        content,
        json!({"cardPrivateData": {"actionIds": ["once"],
                                   "params": {"action": "once", "click_key": "alice-key"}}})
    );

    // Alice sees her answer; Bob still sees the shared, pending card until workmate updates it.
    let shown = dingtalk_state(&app).await["cards"]["approval_item1"].clone();
    assert_eq!(shown["private"][ALICE]["status"], "approved");
    assert_eq!(shown["params"]["status"], "pending");
    assert!(shown["private"].get(BOB).is_none());
    // Alice's buttons are gone: a second click of hers sends nothing.
    let (status, _) = post_json(&app, "/sandbox/dingtalk/click", None, &click).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn an_answer_with_data_that_is_not_strings_is_an_error_and_changes_nothing() {
    let answer = json!({"cardData": {"cardParamMap": {"status": 2}}});
    let (base, _) = recording_workmate(answer).await;
    let app = sandbox(&base);
    let token = access_token(&app).await;
    let card = group_card(DINGTALK_TEMPLATE, "approval_item2", &pending_params());
    call(
        &app,
        "POST",
        "/card/instances/createAndDeliver",
        Some(&token),
        &card,
    )
    .await;
    let click = json!({"user": BOB, "card": "approval_item2", "choice": "deny"});
    let (status, answer) = post_json(&app, "/sandbox/dingtalk/click", None, &click).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
    let shown = dingtalk_state(&app).await["cards"]["approval_item2"].clone();
    assert_eq!(shown["private"], json!({}));
}
