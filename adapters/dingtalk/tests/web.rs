//! The open-platform client against a fake DingTalk: the token is cached, refreshed ahead of its
//! expiry and fetched once more when refused; rate limits, the per-IP ban, server errors, the
//! monthly quota and refusals map to the kit's errors; a card not delivered is a failure.

use std::time::Duration;

use serde_json::{Map, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::AdapterError;
use workmate_dingtalk::web::{CardSpace, MsgKey, Recipient, WebError};

use crate::support::api::{TOKEN, bodies, fake_api, mount_successes, mount_token, requests, web};
use crate::support::gateway::{CLIENT_ID, CLIENT_SECRET};

const GROUP: &str = "cidGroup==";
const SEND: &str = "/v1.0/robot/groupMessages/send";
const TOKEN_PATH: &str = "/v1.0/oauth2/accessToken";

#[tokio::test]
async fn the_token_is_fetched_once_and_sent_with_every_call() {
    let server = fake_api().await;
    let web = web(&server);
    for text in ["one", "two"] {
        web.send_robot(Recipient::Group(GROUP), MsgKey::Text(text))
            .await
            .unwrap();
    }
    let fetches = bodies(&server, "POST", TOKEN_PATH).await;
    assert_eq!(
        fetches,
        vec![json!({ "appKey": CLIENT_ID, "appSecret": CLIENT_SECRET })]
    );
    let sent = requests(&server, "POST", SEND).await;
    assert_eq!(sent.len(), 2);
    assert!(
        sent.iter()
            .all(|(token, _)| token.as_deref() == Some(TOKEN))
    );
    assert_eq!(
        sent[0].1,
        json!({
            "robotCode": CLIENT_ID,
            "openConversationId": GROUP,
            "msgKey": "sampleText",
            "msgParam": "{\"content\":\"one\"}",
        })
    );
}

#[tokio::test]
async fn a_token_about_to_expire_is_replaced_before_use() {
    let server = MockServer::start().await;
    // One minute left is inside the refresh margin: every call fetches a new token.
    mount_token(&server, "short-lived", 60).await;
    mount_successes(&server).await;
    let web = web(&server);
    for _ in 0..2 {
        web.send_robot(Recipient::User("manager1234"), MsgKey::Text("hi"))
            .await
            .unwrap();
    }
    assert_eq!(bodies(&server, "POST", TOKEN_PATH).await.len(), 2);
}

#[tokio::test]
async fn a_refused_token_is_dropped_and_the_call_made_once_more() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "accessToken": "revoked", "expireIn": 7200 })),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_token(&server, "fresh", 7_200).await;
    Mock::given(method("POST"))
        .and(path(SEND))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({ "code": "InvalidAuthentication", "message": "不合法的access_token" }),
        ))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_successes(&server).await;
    let web = web(&server);
    let key = web
        .send_robot(Recipient::Group(GROUP), MsgKey::Text("hi"))
        .await
        .unwrap();
    assert_eq!(key, "q1");
    let tokens: Vec<Option<String>> = requests(&server, "POST", SEND)
        .await
        .into_iter()
        .map(|(token, _)| token)
        .collect();
    assert_eq!(tokens, vec![Some("revoked".into()), Some("fresh".into())]);
    // The fresh token is kept.
    web.send_robot(Recipient::Group(GROUP), MsgKey::Text("again"))
        .await
        .unwrap();
    assert_eq!(bodies(&server, "POST", TOKEN_PATH).await.len(), 2);
}

/// What a group send fails with when DingTalk answers `answer`.
async fn failure(answer: ResponseTemplate) -> AdapterError {
    let server = MockServer::start().await;
    mount_token(&server, TOKEN, 7_200).await;
    Mock::given(method("POST"))
        .and(path(SEND))
        .respond_with(answer)
        .mount(&server)
        .await;
    web(&server)
        .send_robot(Recipient::Group(GROUP), MsgKey::Text("hi"))
        .await
        .unwrap_err()
        .into()
}

#[tokio::test]
async fn rate_limits_server_errors_the_quota_and_refusals_map_to_the_kit_errors() {
    let limited = |secs| AdapterError::RateLimited {
        retry_after: Duration::from_secs(secs),
    };
    let status =
        |code: u16, body: serde_json::Value| ResponseTemplate::new(code).set_body_json(body);
    let too_many = ResponseTemplate::new(429).insert_header("Retry-After", "3");
    assert_eq!(failure(too_many).await, limited(3));
    for code in [
        "Forbidden.AccessDenied.QpsLimitForAppkeyAndApi",
        "Forbidden.AccessDenied.QpsLimitForApi",
    ] {
        let answer = status(403, json!({ "code": code, "message": "too fast" }));
        assert_eq!(failure(answer).await, limited(1), "{code}");
    }
    let legacy = status(200, json!({ "errcode": 90018, "errmsg": "qps" }));
    assert_eq!(failure(legacy).await, limited(1));
    let banned = status(403, json!({ "status": 1111, "wait": 5 }));
    assert_eq!(failure(banned).await, limited(5));

    let down = failure(ResponseTemplate::new(503)).await;
    assert!(matches!(down, AdapterError::Transient(_)), "{down:?}");

    let quota = status(
        403,
        json!({ "code": "Forbidden.AccessDenied.ApiCountLimitForOrg", "message": "quota" }),
    );
    let AdapterError::Rejected(why) = failure(quota).await else {
        panic!("the quota is a refusal");
    };
    assert!(why.contains("monthly API quota"), "{why}");

    let refused = status(
        400,
        json!({ "code": "param.invalid", "message": "robotCode is wrong" }),
    );
    let AdapterError::Rejected(why) = failure(refused).await else {
        panic!("a refusal");
    };
    assert!(
        why.contains("param.invalid") && why.contains("robotCode is wrong"),
        "{why}"
    );

    // The allowed path: the same route answering success is a success.
    let ok = status(200, json!({ "processQueryKey": "k" }));
    let server = MockServer::start().await;
    mount_token(&server, TOKEN, 7_200).await;
    Mock::given(method("POST"))
        .and(path(SEND))
        .respond_with(ok)
        .mount(&server)
        .await;
    let sent = web(&server)
        .send_robot(Recipient::Group(GROUP), MsgKey::Text("hi"))
        .await;
    assert_eq!(sent, Ok("k".to_owned()));
}

#[tokio::test]
async fn a_card_that_was_not_delivered_into_the_chat_is_a_failure() {
    let server = MockServer::start().await;
    mount_token(&server, TOKEN, 7_200).await;
    Mock::given(method("POST"))
        .and(path("/v1.0/card/instances/createAndDeliver"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "success": true,
            "result": { "deliverResults": [{ "success": false, "errorMsg": "robot not in group" }] }
        })))
        .mount(&server)
        .await;
    let failed = web(&server)
        .create_and_deliver(
            "tpl",
            "wm_1",
            &Map::new(),
            workmate_dingtalk::web::CardAudience::default(),
            CardSpace::Group(GROUP),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&failed, WebError::Api { message, .. } if message == "robot not in group"),
        "{failed:?}"
    );
}
