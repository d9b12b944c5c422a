//! Findings 5 and 7 of the second review, replayed against the platforms' routes.
//!
//! 7: Feishu decrypted before it verified, and answered a bad signature and a bad ciphertext
//! differently (a padding oracle); neither Feishu nor WeCom refused a correctly signed request
//! captured long ago. Now the signature is checked first, every refusal answers the same, and a
//! request more than 5 minutes old is refused.
//!
//! 5: a WeCom "private" notice in a group went into the group's reply stream, where everyone
//! reads it. Now the group only hears that it went, or is asked to write privately; the chat
//! layer's suite (`crates/chat/tests/private_notices.rs`) checks all four platforms' adapters.

use axum::http::StatusCode;
use serde_json::json;
use workmate_feishu::crypto;

use crate::feishu::{ENCRYPT_KEY, feishu_app, mention as feishu_mention, post, send, send_at};
use crate::wecom::{CORP, SHELL as WECOM_SHELL, mention as wecom_mention, wecom_app};

#[tokio::test]
async fn feishu_refuses_a_replayed_or_altered_request_alike_and_takes_a_fresh_one() {
    let app = feishu_app(crate::feishu::SHELL).await;
    let sealed = crypto::encrypt_with(
        ENCRYPT_KEY,
        *b"0123456789abcdef",
        &feishu_mention("EvR", "hi"),
    );
    let body = json!({ "encrypt": sealed }).to_string();
    // Captured a day ago, correctly signed: a replay.
    let day_ago = (crate::support::unix_now_s().parse::<u64>().unwrap() - 86_400).to_string();
    let signature = crypto::signature(&day_ago, "nonce-1", ENCRYPT_KEY, body.as_bytes());
    let replayed = send_at(&app, "events", &body, &signature, &day_ago).await;
    assert_eq!(replayed.0, StatusCode::UNAUTHORIZED);
    // One ciphertext byte flipped, unsigned and signed: the same answer as the replay.
    let mut flipped = sealed.clone().into_bytes();
    flipped[30] = if flipped[30] == b'A' { b'B' } else { b'A' };
    let altered = json!({ "encrypt": String::from_utf8(flipped).unwrap() }).to_string();
    assert_eq!(send(&app, "events", &altered, "").await, replayed);
    assert_eq!(send(&app, "events", &altered, &signature).await, replayed);
    // The same message signed now is taken.
    let (status, _) = post(&app, "events", &feishu_mention("EvR", "hi")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn wecom_refuses_a_correctly_signed_message_captured_ten_minutes_ago() {
    let app = wecom_app(WECOM_SHELL).await;
    let message = wecom_mention("M-old", "run it", &app.fake);
    let ten_minutes_ago = (crate::support::unix_now_s().parse::<u64>().unwrap() - 600).to_string();
    let (status, _) = app.post_at(&message, &ten_minutes_ago).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let tenant = workmate_chat::tenant_of(workmate_protocol::Surface::Wecom, CORP);
    assert!(
        app.store
            .sessions()
            .list(&tenant, 10)
            .await
            .unwrap_or_default()
            .is_empty(),
        "nothing refused reached the chat layer"
    );
    // Signed now: taken.
    let (status, _) = app.post(&message).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_wecom_private_notice_in_a_group_never_shows_its_content_there() {
    let app = wecom_app(WECOM_SHELL).await;
    // `/workmate link` answers with a private card: the person's own link and code.
    let (status, reply) = app
        .post(&wecom_mention("M-link", "/workmate link", &app.fake))
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let stream_id = reply["stream"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let shown = if stream_id.is_empty() {
        reply.to_string()
    } else {
        app.follow(&stream_id).await.join("\n")
    };
    assert!(
        shown.contains("message me directly") || shown.contains("private message"),
        "the group hears only where to look: {shown}"
    );
    for private in ["/v1/", "http://", "https://", "code"] {
        assert!(
            !shown.contains(private),
            "{private:?} in the group: {shown}"
        );
    }
}
