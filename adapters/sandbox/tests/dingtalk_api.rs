//! The DingTalk stand-in's open platform against DingTalk's shapes: the token for the configured
//! app only, calls refused without it, cards created and delivered from templates, their shared
//! data updated by key, AI cards streamed until finalized, and robot messages.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use workmate_sandbox::dingtalk::{CONVERSATION_ID, USERS};

use crate::support::{
    DINGTALK_CLIENT_ID, DINGTALK_SECRET, DINGTALK_TEMPLATE, get, post as post_json, sandbox, send,
};

const API: &str = "/sandbox/dingtalk/v1.0";

/// A `v1.0` call with `x-acs-dingtalk-access-token` when given.
pub(crate) async fn call(
    app: &Router,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method(method)
        .uri(format!("{API}{path}"))
        .header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("x-acs-dingtalk-access-token", token);
    }
    send(app, request.body(Body::from(body.to_string())).unwrap()).await
}

/// The access token of the configured app.
pub(crate) async fn token(app: &Router) -> String {
    let (status, answer) = post_json(
        app,
        &format!("{API}/oauth2/accessToken"),
        None,
        &json!({"appKey": DINGTALK_CLIENT_ID, "appSecret": DINGTALK_SECRET}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["expireIn"], 7200);
    answer["accessToken"].as_str().unwrap().to_owned()
}

/// The body of a group card from `template` with `params`, as workmate's client sends it.
pub(crate) fn group_card(template: &str, out_track_id: &str, params: &Value) -> Value {
    json!({
        "cardTemplateId": template,
        "outTrackId": out_track_id,
        "cardData": {"cardParamMap": params},
        "userIdType": 1,
        "callbackType": "HTTP",
        "callbackRouteKey": "workmate",
        "openSpaceId": format!("dtv1.card//IM_GROUP.{CONVERSATION_ID}"),
        "imGroupOpenSpaceModel": {"supportForward": true},
        "imGroupOpenDeliverModel": {"robotCode": DINGTALK_CLIENT_ID},
    })
}

pub(crate) fn pending_params() -> Value {
    json!({"title": "Run run_shell?", "detail": "`echo hi`", "requester": "Alice",
           "status": "pending", "approver": "", "choices": "[\"once\",\"deny\"]"})
}

/// The DingTalk side as the page sees it.
pub(crate) async fn dingtalk_state(app: &Router) -> Value {
    let (status, _, state) = get(app, "/sandbox/dingtalk/state").await;
    assert_eq!(status, StatusCode::OK);
    serde_json::from_str(&state).unwrap()
}

/// The messages of the chat `id`, oldest first.
pub(crate) fn messages(state: &Value, id: &str) -> Vec<Value> {
    state["channels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["id"] == id)
        .flat_map(|c| c["threads"].as_array().cloned().unwrap_or_default())
        .flat_map(|t| t["messages"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn only_the_configured_app_gets_a_token_and_calls_need_it() {
    let app = sandbox("http://127.0.0.1:9");
    let (status, answer) = post_json(
        &app,
        &format!("{API}/oauth2/accessToken"),
        None,
        &json!({"appKey": DINGTALK_CLIENT_ID, "appSecret": "wrong"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        answer["code"].is_string() && answer["message"].is_string(),
        "{answer}"
    );
    let token = token(&app).await;

    let card = group_card(DINGTALK_TEMPLATE, "approval_1", &pending_params());
    for bad in [None, Some("not-the-token")] {
        let (status, answer) =
            call(&app, "POST", "/card/instances/createAndDeliver", bad, &card).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert_eq!(answer["code"], "InvalidAuthentication");
    }
    assert!(
        dingtalk_state(&app).await["cards"]
            .as_object()
            .unwrap()
            .is_empty()
    );
    let (status, answer) = call(
        &app,
        "POST",
        "/card/instances/createAndDeliver",
        Some(&token),
        &card,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result"]["deliverResults"][0]["success"], true);
}

#[tokio::test]
async fn an_approval_card_is_delivered_and_its_shared_data_updated_by_key() {
    let app = sandbox("http://127.0.0.1:9");
    let token = token(&app).await;
    let create = |card: Value| {
        let (app, token) = (app.clone(), token.clone());
        async move {
            call(
                &app,
                "POST",
                "/card/instances/createAndDeliver",
                Some(&token),
                &card,
            )
            .await
        }
    };
    // Data that is not strings, and a group the robot is not in, are refused.
    let mut numbers = group_card(DINGTALK_TEMPLATE, "approval_1", &json!({"status": 1}));
    assert_eq!(create(numbers.clone()).await.0, StatusCode::BAD_REQUEST);
    numbers["openSpaceId"] = json!("dtv1.card//IM_GROUP.cidOther==");
    numbers["cardData"]["cardParamMap"] = pending_params();
    let (status, answer) = create(numbers).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["deliverResults"][0]["success"], false);

    let card = group_card(DINGTALK_TEMPLATE, "approval_1", &pending_params());
    assert_eq!(create(card.clone()).await.0, StatusCode::OK);
    // A retried create delivers the same card again: no second message.
    assert_eq!(create(card).await.0, StatusCode::OK);
    let state = dingtalk_state(&app).await;
    let shown = messages(&state, CONVERSATION_ID);
    assert_eq!(shown.len(), 1, "{state:#}");
    assert_eq!(shown[0]["card_id"], "approval_1");
    assert_eq!(state["cards"]["approval_1"]["kind"], "approval");

    let update = json!({"outTrackId": "approval_1",
        "cardData": {"cardParamMap": {"status": "approved", "approver": "Bob"}},
        "cardUpdateOptions": {"updateCardDataByKey": true}, "userIdType": 1});
    let (status, answer) = call(&app, "PUT", "/card/instances", Some(&token), &update).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let params = dingtalk_state(&app).await["cards"]["approval_1"]["params"].clone();
    assert_eq!(params["status"], "approved");
    assert_eq!(params["title"], "Run run_shell?", "other keys are kept");
    let missing = json!({"outTrackId": "nothing", "cardData": {"cardParamMap": {}}});
    assert_eq!(
        call(&app, "PUT", "/card/instances", Some(&token), &missing)
            .await
            .0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn an_ai_card_streams_its_content_until_finalized() {
    let app = sandbox("http://127.0.0.1:9");
    let token = token(&app).await;
    let mut card = group_card(
        "382e4302-551d-4880-bf29-a30acfab2e71.schema",
        "wm_answer",
        &json!({"content": "> Working", "flowStatus": "2"}),
    );
    card.as_object_mut().unwrap().remove("callbackType");
    let (status, _) = call(
        &app,
        "POST",
        "/card/instances/createAndDeliver",
        Some(&token),
        &card,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let stream = |content: &str, finalize: bool, guid: &str| {
        json!({"outTrackId": "wm_answer", "guid": guid, "key": "content", "content": content,
               "isFull": true, "isFinalize": finalize, "isError": false})
    };
    let (status, answer) = call(
        &app,
        "PUT",
        "/card/streaming",
        Some(&token),
        &stream("Half", false, "g1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let shown = dingtalk_state(&app).await["cards"]["wm_answer"].clone();
    assert_eq!(shown["kind"], "answer");
    assert_eq!(shown["params"]["content"], "Half");
    assert_eq!(shown["finalized"], false);

    let done = stream("**Done.**", true, "g2");
    assert_eq!(
        call(&app, "PUT", "/card/streaming", Some(&token), &done)
            .await
            .0,
        StatusCode::OK
    );
    let shown = dingtalk_state(&app).await["cards"]["wm_answer"].clone();
    assert_eq!(shown["params"]["content"], "**Done.**");
    assert_eq!(shown["finalized"], true);
    // A finalized stream takes no more; the data by key still changes.
    let (status, _) = call(
        &app,
        "PUT",
        "/card/streaming",
        Some(&token),
        &stream("more", false, "g3"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let finished = json!({"outTrackId": "wm_answer",
        "cardData": {"cardParamMap": {"flowStatus": "3"}},
        "cardUpdateOptions": {"updateCardDataByKey": true}});
    assert_eq!(
        call(&app, "PUT", "/card/instances", Some(&token), &finished)
            .await
            .0,
        StatusCode::OK
    );
    let shown = dingtalk_state(&app).await["cards"]["wm_answer"].clone();
    assert_eq!(shown["params"]["flowStatus"], "3");
    assert_eq!(shown["params"]["content"], "**Done.**");
}

#[tokio::test]
async fn robot_messages_reach_the_group_and_people_and_unknown_ids_come_back() {
    let app = sandbox("http://127.0.0.1:9");
    let token = token(&app).await;
    let text = json!({"robotCode": DINGTALK_CLIENT_ID, "openConversationId": CONVERSATION_ID,
        "msgKey": "sampleText", "msgParam": "{\"content\":\"Cancelled.\"}"});
    let (status, answer) = call(
        &app,
        "POST",
        "/robot/groupMessages/send",
        Some(&token),
        &text,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["processQueryKey"].is_string());
    let mut other_robot = text.clone();
    other_robot["robotCode"] = json!("another");
    assert_eq!(
        call(
            &app,
            "POST",
            "/robot/groupMessages/send",
            Some(&token),
            &other_robot
        )
        .await
        .0,
        StatusCode::BAD_REQUEST
    );

    let alice = USERS[0].0;
    let private = json!({"robotCode": DINGTALK_CLIENT_ID, "userIds": [alice, "nobody"],
        "msgKey": "sampleMarkdown", "msgParam": "{\"title\":\"workmate\",\"text\":\"**Only you**\"}"});
    let (status, answer) = call(
        &app,
        "POST",
        "/robot/oToMessages/batchSend",
        Some(&token),
        &private,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["invalidStaffIdList"], json!(["nobody"]));

    let state = dingtalk_state(&app).await;
    let group = messages(&state, CONVERSATION_ID);
    assert_eq!(group[0]["blocks"]["msgParam"]["content"], "Cancelled.");
    let direct = messages(&state, alice);
    assert_eq!(direct[0]["blocks"]["msgKey"], "sampleMarkdown");
    assert_eq!(direct[0]["blocks"]["msgParam"]["text"], "**Only you**");
}

#[tokio::test]
async fn workmates_dingtalk_client_creates_updates_streams_and_sends_through_the_stand_in() {
    use workmate_dingtalk::web::{CallbackType, CardSpace, DingTalkWeb, MsgKey, Recipient};

    let app = sandbox("http://127.0.0.1:9");
    let base = crate::support::serve(app.clone()).await;
    let web = DingTalkWeb::new(
        &format!("{base}/sandbox/dingtalk"),
        DINGTALK_CLIENT_ID,
        DINGTALK_SECRET.to_owned().into(),
    )
    .unwrap();
    let params = |value: Value| value.as_object().unwrap().clone();
    let http = CallbackType::Http {
        route_key: "workmate".into(),
    };
    web.create_and_deliver(
        DINGTALK_TEMPLATE,
        "approval_x",
        &params(pending_params()),
        workmate_dingtalk::web::CardAudience::default(),
        CardSpace::Group(CONVERSATION_ID),
        Some(&http),
    )
    .await
    .unwrap();
    let elsewhere = web
        .create_and_deliver(
            DINGTALK_TEMPLATE,
            "approval_y",
            &params(pending_params()),
            workmate_dingtalk::web::CardAudience::default(),
            CardSpace::Group("cidNotHere=="),
            Some(&http),
        )
        .await;
    assert!(elsewhere.is_err(), "a group the robot is not in");
    web.update_card_data("approval_x", &params(json!({"status": "denied"})))
        .await
        .unwrap();
    web.create_and_deliver(
        "answer.schema",
        "wm_a",
        &params(json!({"content": "", "flowStatus": "2"})),
        workmate_dingtalk::web::CardAudience::default(),
        CardSpace::Robot(USERS[1].0),
        None,
    )
    .await
    .unwrap();
    web.stream_content("wm_a", "g1", "Partly", false, false)
        .await
        .unwrap();
    web.stream_content("wm_a", "g2", "Failed here", true, true)
        .await
        .unwrap();
    let key = web
        .send_robot(Recipient::Group(CONVERSATION_ID), MsgKey::Text("Hello"))
        .await
        .unwrap();
    assert!(!key.is_empty());
    assert!(
        web.send_robot(Recipient::User("nobody"), MsgKey::Text("Hi"))
            .await
            .is_err()
    );

    let state = dingtalk_state(&app).await;
    assert_eq!(state["cards"]["approval_x"]["params"]["status"], "denied");
    let answer = &state["cards"]["wm_a"];
    assert_eq!(answer["kind"], "answer");
    assert_eq!(answer["space"], USERS[1].0);
    assert_eq!(answer["params"]["content"], "Failed here");
    assert_eq!(
        (&answer["finalized"], &answer["failed"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(messages(&state, USERS[1].0)[0]["card_id"], "wm_a");
    assert_eq!(
        messages(&state, CONVERSATION_ID)[1]["blocks"]["msgParam"]["content"],
        "Hello"
    );
    assert!(state["cards"].get("approval_y").is_none());
}
