//! HTTP mode: the robot's signed callback, card callbacks signed with `x-ddpaas-signature`,
//! the encrypted event push, and `[platforms.dingtalk]` as configured.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use workmate_dingtalk::sign;
use workmate_server::config::{DEFAULT_ANSWER_TEMPLATE_ID, Overrides};
use workmate_store::InboxItemState;
use workmate_wxcrypto::Crypto;

use super::{
    CLIENT_ID, CLIENT_SECRET, DingTalkApp, SHELL, TWO_ANSWERS, answered, approval_card,
    dingtalk_app, item_state, keyed_click, parked, robot_message, turn_inputs, turns,
    updated_for_everyone,
};
use crate::config::load;

const TOKEN: &str = "event-token";
const AES_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

pub(crate) fn now_ms() -> i64 {
    let elapsed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(elapsed.as_millis()).unwrap()
}

pub(crate) async fn http_app() -> DingTalkApp {
    dingtalk_app(SHELL, |c| {
        c.http().with_event_push(TOKEN.into(), AES_KEY.into())
    })
    .await
}

pub(crate) async fn post(
    app: &DingTalkApp,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method("POST")
        .uri(uri)
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Body::from(body.to_owned())).unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The robot's callback, signed at `timestamp` with `secret`.
pub(crate) async fn robot(
    app: &DingTalkApp,
    body: &Value,
    timestamp: i64,
    secret: &str,
) -> (StatusCode, Value) {
    // Each message of DingTalk's is signed at its own millisecond (a pair carries one message).
    static USED: std::sync::Mutex<Vec<i64>> = std::sync::Mutex::new(Vec::new());
    let timestamp = {
        let mut used = USED.lock().unwrap();
        let mut at = timestamp;
        while used.contains(&at) {
            at += 1;
        }
        used.push(at);
        at
    };
    let timestamp = timestamp.to_string();
    let sign = sign::robot_sign(secret, &timestamp);
    let headers = [("timestamp", timestamp.as_str()), ("sign", sign.as_str())];
    post(
        app,
        "/v1/platforms/dingtalk/robot",
        &headers,
        &body.to_string(),
    )
    .await
}

/// A card callback, signed with `secret` now (each call at its own millisecond, as DingTalk's
/// clicks are: a signature pair is taken once).
pub(crate) async fn card(app: &DingTalkApp, body: &Value, secret: &str) -> (StatusCode, Value) {
    use std::sync::atomic::{AtomicI64, Ordering};
    static LAST: AtomicI64 = AtomicI64::new(0);
    let next = |last: i64| Some(now_ms().max(last + 1));
    let last = LAST
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, next)
        .unwrap_or_default();
    let timestamp = now_ms().max(last + 1).to_string();
    let sign = sign::card_callback_sign(secret, &timestamp);
    card_signed(app, body, &timestamp, &sign).await
}

/// A card callback with the signature headers `timestamp` and `sign`, as given.
pub(crate) async fn card_signed(
    app: &DingTalkApp,
    body: &Value,
    timestamp: &str,
    sign: &str,
) -> (StatusCode, Value) {
    let headers = [
        ("x-ddpaas-signature-timestamp", timestamp),
        ("x-ddpaas-signature", sign),
    ];
    post(
        app,
        "/v1/platforms/dingtalk/card",
        &headers,
        &body.to_string(),
    )
    .await
}

#[tokio::test]
async fn a_signed_robot_callback_is_taken_and_a_bad_or_expired_sign_is_refused() {
    let app = http_app().await;
    let message = robot_message("msg-1", "run it");
    let two_hours = 2 * 60 * 60 * 1000;
    for (what, timestamp, secret) in [
        ("another secret", now_ms(), "not-the-secret"),
        ("two hours old", now_ms() - two_hours, CLIENT_SECRET),
        ("two hours ahead", now_ms() + two_hours, CLIENT_SECRET),
    ] {
        let (status, _) = robot(&app, &message, timestamp, secret).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}");
    }
    let (status, _) = post(
        &app,
        "/v1/platforms/dingtalk/robot",
        &[],
        &message.to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "unsigned");
    let tenant = workmate_chat::tenant_of(workmate_protocol::Surface::Dingtalk, super::CORP);
    assert!(
        app.store
            .sessions()
            .list(&tenant, 10)
            .await
            .unwrap_or_default()
            .is_empty(),
        "nothing refused reached the chat layer"
    );

    // Signed with the AppSecret, within the hour: stored, and answered.
    let (status, answer) = robot(&app, &message, now_ms() - 30 * 60 * 1000, CLIENT_SECRET).await;
    assert_eq!((status, answer), (StatusCode::OK, json!({})));
    parked(&app).await;
    assert_eq!(turns(&app).await, 1);
}

#[tokio::test]
async fn a_redelivered_robot_callback_runs_one_turn() {
    let app = dingtalk_app(TWO_ANSWERS, |c| c.http()).await;
    let message = robot_message("msg-dup", "hello");
    for _ in 0..2 {
        let (status, answer) = robot(&app, &message, now_ms(), CLIENT_SECRET).await;
        assert_eq!((status, answer), (StatusCode::OK, json!({})));
    }
    answered(&app, "First answer.").await;
    let next = robot_message("msg-next", "and again");
    assert_eq!(
        robot(&app, &next, now_ms(), CLIENT_SECRET).await.0,
        StatusCode::OK
    );
    answered(&app, "Second answer.").await;
    assert_eq!(turn_inputs(&app, 2).await, ["hello", "and again"]);
}

#[tokio::test]
async fn an_http_card_click_approves_and_the_card_is_updated_for_everyone() {
    let app = http_app().await;
    let (status, _) = robot(
        &app,
        &robot_message("msg-1", "run it"),
        now_ms(),
        CLIENT_SECRET,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;
    let (out_track_id, created) = approval_card(&app, &item).await;
    assert_eq!(created.body["callbackType"], "HTTP", "{:#}", created.body);
    assert_eq!(
        created.body["callbackRouteKey"], "workmate",
        "{:#}",
        created.body
    );

    let (status, _) = card(&app, &keyed_click(&created, "boss", "once"), "wrong").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The card binds its buttons to who may decide: the owner and the configured admin.
    let private = created.body["privateData"].as_object().unwrap();
    let bound: Vec<&str> = private.keys().map(String::as_str).collect();
    assert_eq!(bound, ["ana", "boss"], "{:#}", created.body);
    let (status, _) = card(
        &app,
        &keyed_click(&created, "stranger", "once"),
        CLIENT_SECRET,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a stranger's click carries no key"
    );
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);

    let started = Instant::now();
    let (status, answer) = card(&app, &keyed_click(&created, "boss", "once"), CLIENT_SECRET).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["cardData"]["cardParamMap"]["status"], "approved",
        "{answer:#}"
    );
    updated_for_everyone(&app, &out_track_id, "approved").await;
    answered(&app, "Done.").await;
}

#[tokio::test]
async fn a_robot_message_not_stored_is_answered_503_so_dingtalk_retries() {
    let app = http_app().await;
    app.store.close().await;
    let (status, _) = robot(
        &app,
        &robot_message("msg-1", "run it"),
        now_ms(),
        CLIENT_SECRET,
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn the_event_push_is_decrypted_for_the_app_and_answered_with_encrypted_success() {
    let app = http_app().await;
    let crypto = Crypto::new(TOKEN, AES_KEY, CLIENT_ID).unwrap();
    let push = |crypto: &Crypto, plaintext: &str| {
        let encrypt = crypto.encrypt(plaintext);
        let signature = crypto.signature("1700000000000", "nonce1", &encrypt);
        (
            format!(
                "/v1/platforms/dingtalk/events?msg_signature={signature}&timestamp=1700000000000&nonce=nonce1"
            ),
            json!({ "encrypt": encrypt }).to_string(),
        )
    };
    let (uri, body) = push(&crypto, r#"{"EventType":"check_url"}"#);
    let (status, answer) = post(&app, &uri, &[], &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let timestamp = answer["timeStamp"].as_str().unwrap();
    let plain = crypto
        .decrypt(
            answer["msg_signature"].as_str().unwrap(),
            timestamp,
            answer["nonce"].as_str().unwrap(),
            answer["encrypt"].as_str().unwrap(),
        )
        .unwrap();
    assert_eq!(plain, "success");

    // The signature may also come as `signature`.
    let (uri, body) = push(&crypto, r#"{"EventType":"chat_update_title"}"#);
    let uri = uri.replace("msg_signature=", "signature=");
    assert_eq!(post(&app, &uri, &[], &body).await.0, StatusCode::OK);

    // Signed with another token: refused. Encrypted for another app: refused.
    let (uri, body) = push(&Crypto::new("other", AES_KEY, CLIENT_ID).unwrap(), "{}");
    assert_eq!(
        post(&app, &uri, &[], &body).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (uri, body) = push(&Crypto::new(TOKEN, AES_KEY, "otherapp").unwrap(), "{}");
    assert_eq!(
        post(&app, &uri, &[], &body).await.0,
        StatusCode::BAD_REQUEST
    );
}

#[test]
fn the_dingtalk_section_has_defaults_clear_errors_and_hidden_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        ("WORKMATE__PLATFORMS__DINGTALK__CLIENT_ID", "dingappkey"),
        (
            "WORKMATE__PLATFORMS__DINGTALK__CLIENT_SECRET",
            "app-secret-value",
        ),
        (
            "WORKMATE__PLATFORMS__DINGTALK__CARD_TEMPLATE_ID",
            "tpl.schema",
        ),
    ];
    let config = load(dir.path(), &base, Overrides::default()).unwrap();
    let dingtalk = config.platforms.dingtalk.as_ref().unwrap();
    assert_eq!(dingtalk.mode.as_str(), "stream");
    assert_eq!(dingtalk.api_base, "https://api.dingtalk.com");
    assert_eq!(dingtalk.gateway_base, dingtalk.api_base);
    assert_eq!(dingtalk.answer_template_id, DEFAULT_ANSWER_TEMPLATE_ID);
    assert!(dingtalk.token.is_none() && dingtalk.encoding_aes_key.is_none());
    let shown = config.to_redacted_toml();
    assert!(
        shown.contains("[platforms.dingtalk]")
            && shown.contains(r#"client_secret = "***""#)
            && !shown.contains("app-secret-value"),
        "{shown}"
    );

    let with = |extra: &[(&'static str, &'static str)]| {
        let mut env: Vec<(&str, &str)> = base.to_vec();
        env.extend_from_slice(extra);
        load(dir.path(), &env, Overrides::default())
    };
    let config = with(&[
        ("WORKMATE__PLATFORMS__DINGTALK__MODE", "http"),
        (
            "WORKMATE__PLATFORMS__DINGTALK__GATEWAY_BASE",
            "http://127.0.0.1:9",
        ),
        ("WORKMATE__PLATFORMS__DINGTALK__ADMINS", "manager1,manager2"),
        ("WORKMATE__PLATFORMS__DINGTALK__CORP_ID", "dingcorp1"),
    ])
    .unwrap();
    let dingtalk = config.platforms.dingtalk.as_ref().unwrap();
    assert_eq!(dingtalk.mode.as_str(), "http");
    assert_eq!(dingtalk.gateway_base, "http://127.0.0.1:9");
    assert_eq!(dingtalk.admins, ["manager1", "manager2"]);
    assert_eq!(dingtalk.corp_id.as_deref(), Some("dingcorp1"));

    for (extra, names) in [
        (
            ("WORKMATE__PLATFORMS__DINGTALK__MODE", "webhook"),
            "\"stream\" or \"http\"",
        ),
        (
            ("WORKMATE__PLATFORMS__DINGTALK__GATEWAY_BASE", "ftp://x"),
            "gateway_base",
        ),
        (
            ("WORKMATE__PLATFORMS__DINGTALK__TOKEN", "t"),
            "encoding_aes_key",
        ),
        (
            ("WORKMATE__PLATFORMS__DINGTALK__ADMINS", "manager1"),
            "admins need corp_id",
        ),
        (
            ("WORKMATE__PLATFORMS__DINGTALK__ENCODING_AES_KEY", "short"),
            "encoding_aes_key",
        ),
    ] {
        let err = with(&[extra]).unwrap_err().to_string();
        assert!(err.contains(names), "{extra:?}: {err}");
    }
    let err = load(dir.path(), &base[..2], Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("card_template_id")
            && err.contains("WORKMATE__PLATFORMS__DINGTALK__CARD_TEMPLATE_ID"),
        "names what to set: {err}"
    );
}
