//! `FeishuPlatform` against a fake open platform: a streaming card streams its text until its
//! streaming budget runs out, then is closed for streaming and replaced whole, so a long turn's
//! card never hits Feishu's silent 10-minute cut-off.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::{ChatAdapter, ChatTarget, Posting};
use workmate_feishu::FeishuPlatform;
use workmate_feishu::web::FeishuWeb;

fn ok(data: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({ "code": 0, "msg": "success", "data": data }))
}

/// A fake open platform: its token, and success for every card call.
pub(crate) async fn fake_feishu() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/open-apis/auth/v3/tenant_access_token/internal"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"code": 0, "msg": "ok", "tenant_access_token": "t-test", "expire": 7200}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/open-apis/cardkit/v1/cards"))
        .respond_with(ok(&json!({ "card_id": "card_1" })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path_regex("^/open-apis/im/v1/messages/.+/reply$"))
        .respond_with(ok(&json!({ "message_id": "om_card" })))
        .mount(&server)
        .await;
    for verb in ["PUT", "PATCH"] {
        Mock::given(method(verb))
            .and(path_regex("^/open-apis/cardkit/v1/cards/card_1.*$"))
            .respond_with(ok(&json!({})))
            .mount(&server)
            .await;
    }
    server
}

/// A running turn's card: streaming, its answer in one markdown element.
fn streaming_card(answer: &str) -> Value {
    json!({
        "schema": "2.0",
        "config": { "update_multi": true, "streaming_mode": true },
        "body": { "elements": [
            { "tag": "markdown", "element_id": "answer", "content": answer },
            { "tag": "button", "element_id": "stop", "text": { "tag": "plain_text", "content": "Stop" } }
        ]}
    })
}

/// The CardKit calls made since `skip`: `(verb, path, body)`.
async fn calls(server: &MockServer, skip: usize) -> Vec<(String, String, Value)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path().starts_with("/open-apis/cardkit/v1/cards/"))
        .skip(skip)
        .map(|r| {
            let body = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            (r.method.to_string(), r.url.path().to_owned(), body)
        })
        .collect()
}

#[tokio::test]
async fn a_card_that_streamed_past_its_budget_is_closed_and_then_updated_whole() {
    let server = fake_feishu().await;
    let web =
        Arc::new(FeishuWeb::new(&server.uri(), "cli_test", "secret".to_owned().into()).unwrap());
    let platform = FeishuPlatform::new(web).with_streaming_budget(Duration::from_millis(300));
    let target = ChatTarget {
        chat_id: "oc_chat".into(),
        thread_id: Some("om_root".into()),
        reply: None,
        person: None,
    };
    let posted = platform
        .post(&target, &streaming_card("One"), &Posting::first("k1"))
        .await
        .unwrap();

    // Within the budget only the text element is set.
    platform
        .update(&posted, &streaming_card("One two"), 1)
        .await
        .unwrap();
    let within = calls(&server, 0).await;
    assert_eq!(within.len(), 1, "{within:?}");
    assert_eq!(
        within[0].1,
        "/open-apis/cardkit/v1/cards/card_1/elements/answer/content"
    );
    assert_eq!(within[0].2["content"], "One two");
    assert_eq!(within[0].2["sequence"], 2);

    // Past it: streaming is closed, then the card is replaced whole, as not streaming.
    tokio::time::sleep(Duration::from_millis(350)).await;
    platform
        .update(&posted, &streaming_card("One two three"), 2)
        .await
        .unwrap();
    let closing = calls(&server, 1).await;
    assert_eq!(closing.len(), 2, "{closing:?}");
    assert_eq!(
        (closing[0].0.as_str(), closing[0].1.as_str()),
        ("PATCH", "/open-apis/cardkit/v1/cards/card_1/settings")
    );
    assert_eq!(closing[0].2["sequence"], 4);
    assert_eq!(
        (closing[1].0.as_str(), closing[1].1.as_str()),
        ("PUT", "/open-apis/cardkit/v1/cards/card_1")
    );
    assert_eq!(closing[1].2["sequence"], 5);
    let card: Value = serde_json::from_str(closing[1].2["card"]["data"].as_str().unwrap()).unwrap();
    assert_eq!(card["config"]["streaming_mode"], false);
    assert_eq!(card["body"]["elements"][0]["content"], "One two three");

    // From then on every change replaces the card; streaming is not closed again.
    platform
        .update(&posted, &streaming_card("One two three four"), 3)
        .await
        .unwrap();
    let after = calls(&server, 3).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(
        (after[0].0.as_str(), after[0].1.as_str()),
        ("PUT", "/open-apis/cardkit/v1/cards/card_1")
    );
    assert_eq!(after[0].2["sequence"], 7);
}

#[tokio::test]
async fn a_card_is_made_before_its_message_and_a_repeated_post_sends_the_same_uuid() {
    let server = fake_feishu().await;
    let web =
        Arc::new(FeishuWeb::new(&server.uri(), "cli_test", "secret".to_owned().into()).unwrap());
    let platform = FeishuPlatform::new(web);
    let target = ChatTarget {
        chat_id: "oc_chat".into(),
        thread_id: Some("om_root".into()),
        reply: None,
        person: None,
    };
    let rendered = streaming_card("One");
    let reserved = platform
        .reserve(&target, &rendered, "key-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        reserved.message_id, "card_1",
        "the card entity's id, before any message"
    );
    let first = Posting {
        reserved: Some(reserved.clone()),
        ..Posting::first("key-1")
    };
    // Posted, then posted again by a process that did not know the first post was made.
    let again = Posting {
        again: true,
        ..first.clone()
    };
    for posting in [&first, &again] {
        let posted = platform.post(&target, &rendered, posting).await.unwrap();
        assert_eq!(posted, reserved);
    }
    let replies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path().ends_with("/reply"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(replies.len(), 2);
    for reply in &replies {
        // Feishu sends at most one message per uuid within an hour.
        assert_eq!(reply["uuid"], "key-1");
        let content: Value = serde_json::from_str(reply["content"].as_str().unwrap()).unwrap();
        assert_eq!(content["data"]["card_id"], "card_1");
    }
    let created = server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path() == "/open-apis/cardkit/v1/cards")
        .count();
    assert_eq!(created, 1, "one card entity");
}
