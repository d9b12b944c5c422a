//! The Web API client against a fake Slack (wiremock): the requests it sends, how it reads
//! Slack's answers, and when it retries.

use std::time::Duration;

use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_slack::{AuthInfo, PostedMessage, RetryPolicy, SlackWeb, WebError};

const TOKEN: &str = "xoxb-test-token-123";

/// A client for the fake server, with retries short enough for a test.
async fn slack() -> (MockServer, SlackWeb) {
    let server = MockServer::start().await;
    let web = SlackWeb::new(&format!("{}/api/", server.uri()), SecretString::from(TOKEN))
        .unwrap()
        .with_retry_policy(RetryPolicy {
            rate_limit_retries: 3,
            max_retry_after: Duration::from_millis(50),
            default_retry_after: Duration::from_millis(10),
            server_error_backoff: vec![Duration::from_millis(10); 3],
        });
    (server, web)
}

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

async fn requests(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap()
}

#[tokio::test]
async fn post_message_sends_json_with_the_bearer_token() {
    let (server, web) = slack().await;
    let blocks = json!([{ "type": "divider" }]);
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .and(header("content-type", "application/json; charset=utf-8"))
        .and(body_json(json!({
            "channel": "C123",
            "text": "Done",
            "blocks": blocks,
            "thread_ts": "1700000000.000100",
        })))
        .respond_with(ok(json!({
            "ok": true,
            "channel": "C123",
            "ts": "1700000001.000200",
            "message": { "text": "Done" }
        })))
        .expect(1)
        .mount(&server)
        .await;
    let posted = web
        .post_message("C123", Some("1700000000.000100"), &blocks, "Done")
        .await
        .unwrap();
    assert_eq!(
        posted,
        serde_json::from_value::<PostedMessage>(
            json!({"channel": "C123", "ts": "1700000001.000200"})
        )
        .unwrap()
    );
    assert_eq!(posted.ts, "1700000001.000200");

    // Without a thread, no `thread_ts` key at all.
    server.reset().await;
    Mock::given(path("/api/chat.postMessage"))
        .respond_with(ok(json!({"ok": true, "channel": "C123", "ts": "2.0"})))
        .mount(&server)
        .await;
    web.post_message("C123", None, &blocks, "Done")
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&requests(&server).await[0].body).unwrap();
    assert_eq!(
        body,
        json!({ "channel": "C123", "text": "Done", "blocks": blocks })
    );
}

#[tokio::test]
async fn update_and_ephemeral_send_their_fields() {
    let (server, web) = slack().await;
    Mock::given(path("/api/chat.update"))
        .and(body_json(json!({
            "channel": "C1", "ts": "1.5", "text": "✅ Approved", "blocks": [],
        })))
        .respond_with(ok(
            json!({"ok": true, "channel": "C1", "ts": "1.5", "text": "✅ Approved"}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/api/chat.postEphemeral"))
        .and(body_json(
            json!({"channel": "C1", "user": "U9", "text": "Only approvers can do that.",
                               "thread_ts": "1.4"}),
        ))
        .respond_with(ok(json!({"ok": true, "message_ts": "1.6"})))
        .expect(1)
        .mount(&server)
        .await;
    let updated = web
        .update_message("C1", "1.5", &json!([]), "✅ Approved")
        .await
        .unwrap();
    assert_eq!(
        (updated.channel.as_str(), updated.ts.as_str()),
        ("C1", "1.5")
    );
    web.post_ephemeral("C1", Some("1.4"), "U9", None, "Only approvers can do that.")
        .await
        .unwrap();
}

#[tokio::test]
async fn ok_false_is_an_api_error_without_the_token() {
    let (server, web) = slack().await;
    Mock::given(path("/api/chat.postMessage"))
        .respond_with(ok(json!({"ok": false, "error": "channel_not_found"})))
        .expect(1)
        .mount(&server)
        .await;
    let err = web
        .post_message("C404", None, &json!([]), "hi")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WebError::Api { method: "chat.postMessage", error } if error == "channel_not_found"),
        "{err:?}"
    );
    assert!(!format!("{err} {err:?}").contains(TOKEN));
}

#[tokio::test]
async fn a_429_waits_for_retry_after_then_succeeds() {
    let (server, web) = slack().await;
    Mock::given(path("/api/chat.update"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path("/api/chat.update"))
        .respond_with(ok(json!({"ok": true, "channel": "C1", "ts": "1.5"})))
        .with_priority(2)
        .mount(&server)
        .await;
    let updated = web
        .update_message("C1", "1.5", &json!([]), "x")
        .await
        .unwrap();
    assert_eq!(updated.ts, "1.5");
    assert_eq!(requests(&server).await.len(), 2, "one retry");
}

#[tokio::test]
async fn a_long_retry_after_is_capped_and_retries_are_bounded() {
    let (server, web) = slack().await;
    Mock::given(path("/api/chat.update"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "3600"))
        .mount(&server)
        .await;
    let err = web
        .update_message("C1", "1.5", &json!([]), "x")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            WebError::Http {
                method: "chat.update",
                status: 429,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        requests(&server).await.len(),
        4,
        "the first try and 3 retries, each after the capped wait instead of an hour"
    );
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    let (server, web) = slack().await;
    Mock::given(path("/api/auth.test"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path("/api/auth.test"))
        .respond_with(ok(json!({
            "ok": true,
            "url": "https://acme.slack.com/",
            "team": "Acme",
            "user": "workmate",
            "team_id": "T0001",
            "user_id": "U0BOT",
            "bot_id": "B0BOT",
            "is_enterprise_install": false
        })))
        .with_priority(2)
        .mount(&server)
        .await;
    let info: AuthInfo = web.auth_test().await.unwrap();
    assert_eq!(
        (
            info.team_id.as_str(),
            info.user_id.as_str(),
            info.bot_id.as_deref()
        ),
        ("T0001", "U0BOT", Some("B0BOT"))
    );
    assert_eq!(requests(&server).await.len(), 3);

    server.reset().await;
    Mock::given(path("/api/auth.test"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let err = web.auth_test().await.unwrap_err();
    assert!(matches!(err, WebError::Http { status: 500, .. }), "{err:?}");
    assert_eq!(requests(&server).await.len(), 4, "3 retries, then give up");
}

#[tokio::test]
async fn other_statuses_and_bad_bodies_are_not_retried() {
    let (server, web) = slack().await;
    Mock::given(path("/api/chat.postMessage"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    Mock::given(path("/api/auth.test"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>proxy</html>"))
        .mount(&server)
        .await;
    let err = web
        .post_message("C1", None, &json!([]), "x")
        .await
        .unwrap_err();
    assert!(matches!(err, WebError::Http { status: 404, .. }), "{err:?}");
    let err = web.auth_test().await.unwrap_err();
    assert!(
        matches!(
            err,
            WebError::Decode {
                method: "auth.test",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(requests(&server).await.len(), 2);
}

#[tokio::test]
async fn a_user_token_has_no_bot_id() {
    let (server, web) = slack().await;
    Mock::given(path("/api/auth.test"))
        .respond_with(ok(json!({"ok": true, "team_id": "T1", "user_id": "U1"})))
        .mount(&server)
        .await;
    assert_eq!(web.auth_test().await.unwrap().bot_id, None);
}

#[tokio::test]
async fn user_info_is_asked_with_form_fields_and_prefers_the_display_name() {
    let (server, web) = slack().await;
    Mock::given(method("POST"))
        .and(path("/api/users.info"))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(wiremock::matchers::body_string("user=U42"))
        .respond_with(ok(json!({
            "ok": true,
            "user": {"id": "U42", "name": "ana", "real_name": "Ana Lima", "tz": "Asia/Shanghai",
                     "profile": {"display_name": "Ana", "real_name": "Ana Lima"}}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let info = web.user_info("U42").await.unwrap();
    assert_eq!(info.name.as_deref(), Some("Ana"));
    assert_eq!(info.tz.as_deref(), Some("Asia/Shanghai"));

    Mock::given(method("POST"))
        .and(path("/api/users.info"))
        .and(wiremock::matchers::body_string("user=U43"))
        .respond_with(ok(
            json!({"ok": true, "user": {"id": "U43", "name": "bot-ish"}}),
        ))
        .mount(&server)
        .await;
    let bare = web.user_info("U43").await.unwrap();
    assert_eq!((bare.name.as_deref(), bare.tz), (Some("bot-ish"), None));
}

#[tokio::test]
async fn a_keyed_post_carries_its_key_as_metadata_and_is_found_again_in_its_thread() {
    let (server, web) = slack().await;
    Mock::given(path("/api/chat.postMessage"))
        .respond_with(ok(json!({"ok": true, "channel": "C1", "ts": "5.0"})))
        .mount(&server)
        .await;
    Mock::given(path("/api/conversations.replies"))
        .respond_with(ok(json!({"ok": true, "messages": [
            {"ts": "1.0", "text": "the question"},
            {"ts": "4.0", "metadata": {"event_type": "workmate_card", "event_payload": {"key": "other"}}},
            {"ts": "5.0", "metadata": {"event_type": "workmate_card", "event_payload": {"key": "k-1"}}}
        ]})))
        .mount(&server)
        .await;
    web.post_keyed("C1", Some("1.0"), &json!([]), "Done", Some("k-1"))
        .await
        .unwrap();
    let sent: Value = serde_json::from_slice(&requests(&server).await[0].body).unwrap();
    assert_eq!(
        sent["metadata"],
        json!({"event_type": "workmate_card", "event_payload": {"key": "k-1"}})
    );

    let found = web
        .find_keyed("C1", Some("1.0"), "k-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.channel.as_str(), found.ts.as_str()), ("C1", "5.0"));
    let asked = &requests(&server).await[1];
    let form = String::from_utf8(asked.body.clone()).unwrap();
    assert!(
        form.contains("ts=1.0") && form.contains("include_all_metadata=true"),
        "{form}"
    );
    assert_eq!(
        web.find_keyed("C1", Some("1.0"), "missing").await.unwrap(),
        None
    );
}
