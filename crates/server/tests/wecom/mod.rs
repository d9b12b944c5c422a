//! The WeCom smart robot end to end, in process: encrypted callbacks in (messages, stream
//! refreshes, card clicks), sealed replies back, and the one further answer a message takes
//! through its `response_url`, posted to a fake WeCom; the self-built
//! app ([`app`]); the long connection ([`socket`]).

mod app;
mod groups;
mod replicas;
mod socket;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_protocol::{EventKind, Surface};
use workmate_server::config::WeComConfig;
use workmate_server::http::{AppState, router};
use workmate_server::platforms::wecom::WeComSurface;
use workmate_server::platforms::{Mounted, Platforms};
use workmate_store::{InboxFilter, InboxItem, InboxItemState, Store};
use workmate_wxcrypto::Crypto;

use crate::router::app_with_script;
use crate::support::{PATIENCE, calls, eventually, eventually_ok, thread_session, wait_for};

const TOKEN: &str = "QDG6eK";
const AES_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";
pub(crate) const CORP: &str = "ww_acme";
pub(crate) const CHAT: &str = "wr_group_1";
pub(crate) const SHELL: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;
const STREAMED: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "one two three four five six seven eight nine ten", "chunk_delay_ms": 90}]}]}"#;

pub(crate) struct WeComApp {
    router: Router,
    pub(crate) store: Store,
    pub(crate) fake: MockServer,
    crypto: Crypto,
    _surface: Arc<WeComSurface>,
    _dir: tempfile::TempDir,
}

pub(crate) async fn wecom_app(script: &str) -> WeComApp {
    serve(app_with_script(script).await, fake_wecom().await)
}

/// A fake WeCom that takes every answer sent through a `response_url`.
async fn fake_wecom() -> MockServer {
    let fake = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"errcode": 0, "errmsg": "ok"})),
        )
        .mount(&fake)
        .await;
    fake
}

/// WeCom in callback mode on `app`, answering through `fake`.
fn serve(app: crate::router::App, fake: MockServer) -> WeComApp {
    let config = WeComConfig::callback(CORP, TOKEN.into(), AES_KEY.into(), &fake.uri())
        .with_admins(vec!["boss".into()]);
    let chat = app.state.chat.clone();
    chat.attach_scheduler(app.state.scheduler.clone());
    let surface =
        WeComSurface::new(&config, &chat, &workmate_net::NetworkPolicy::public_only()).unwrap();
    chat.start();
    let state = AppState {
        platforms: Platforms::of([Arc::clone(&surface) as Arc<dyn Mounted>]),
        ..app.state.clone()
    };
    WeComApp {
        router: router(state),
        store: app.store.clone(),
        fake,
        crypto: Crypto::new(TOKEN, AES_KEY, "").unwrap(),
        _surface: surface,
        _dir: app.dir,
    }
}

impl WeComApp {
    /// Another replica (named `replica`) serving the same robot on the same database, with a
    /// coordinator of its own: they share only the database.
    pub(crate) async fn replica(&self, replica: &str, script: &str) -> WeComApp {
        let app = crate::router::app_on(
            self.store.clone(),
            tempfile::tempdir().unwrap(),
            script,
            replica,
        );
        serve(app, fake_wecom().await)
    }

    /// Posts `plaintext` encrypted and signed, as WeCom does; the status and the decrypted
    /// reply (`Null` for an empty one).
    pub(crate) async fn post(&self, plaintext: &str) -> (StatusCode, Value) {
        self.post_at(plaintext, &crate::support::unix_now_s()).await
    }

    /// [`WeComApp::post`], signed at `now` (Unix seconds).
    pub(crate) async fn post_at(&self, plaintext: &str, now: &str) -> (StatusCode, Value) {
        let encrypt = self.crypto.encrypt_with(*b"0123456789abcdef", plaintext);
        let signature = self.crypto.signature(now, "nonce1", &encrypt);
        let request = Request::builder()
            .method("POST")
            .uri(format!(
                "/v1/platforms/wecom/callback?msg_signature={signature}&timestamp={now}&nonce=nonce1"
            ))
            .header("content-type", "application/json")
            .body(Body::from(json!({ "encrypt": encrypt }).to_string()))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        if bytes.is_empty() {
            return (status, Value::Null);
        }
        let sealed: Value = serde_json::from_slice(&bytes).unwrap();
        if status != StatusCode::OK {
            return (status, sealed);
        }
        let plain = self
            .crypto
            .decrypt(
                sealed["msgsignature"].as_str().unwrap(),
                &sealed["timestamp"].to_string(),
                sealed["nonce"].as_str().unwrap(),
                sealed["encrypt"].as_str().unwrap(),
            )
            .unwrap();
        (status, serde_json::from_str(&plain).unwrap())
    }

    /// The stream's content as WeCom sees it on a refresh.
    pub(crate) async fn refresh(&self, stream_id: &str) -> (String, bool) {
        let (status, reply) = self.post(&refresh(stream_id)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(reply["msgtype"], "stream");
        assert_eq!(reply["stream"]["id"], stream_id);
        (
            reply["stream"]["content"].as_str().unwrap().to_owned(),
            reply["stream"]["finish"].as_bool().unwrap(),
        )
    }

    /// Refreshes the stream until an answer carries a template card; the card.
    pub(crate) async fn card_on(&self, stream_id: &str) -> Value {
        let reply = workmate_test_support::eventually_ok(
            "a template card on the stream",
            Duration::from_secs(20),
            || async {
                let (status, reply) = self.post(&refresh(stream_id)).await;
                assert_eq!(status, StatusCode::OK);
                if reply["msgtype"] == "stream_with_template_card" {
                    Ok(reply)
                } else {
                    Err(reply)
                }
            },
        )
        .await;
        assert_eq!(reply["stream"]["id"], stream_id);
        reply["template_card"].clone()
    }

    /// Refreshes the stream as WeCom does until it is finished; every content seen.
    pub(crate) async fn follow(&self, stream_id: &str) -> Vec<String> {
        let seen = std::sync::Mutex::new(Vec::new());
        let seen = &seen;
        eventually_ok(
            "the stream finished",
            Duration::from_secs(20),
            || async move {
                let (content, finish) = self.refresh(stream_id).await;
                let mut seen = seen.lock().unwrap();
                seen.push(content);
                if finish {
                    Ok(seen.clone())
                } else {
                    Err(seen.clone())
                }
            },
        )
        .await
    }
}

pub(crate) fn mention(msgid: &str, text: &str, fake: &MockServer) -> String {
    json!({
        "msgid": msgid, "aibotid": "bot1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": "ana"}, "response_url": format!("{}/response/{msgid}", fake.uri()),
        "msgtype": "text", "text": {"content": format!("@workmate {text}")},
    })
    .to_string()
}

fn refresh(stream_id: &str) -> String {
    json!({
        "msgid": format!("refresh-{stream_id}"), "aibotid": "bot1", "chatid": CHAT,
        "chattype": "group", "from": {"userid": "ana"}, "msgtype": "stream",
        "stream": {"id": stream_id},
    })
    .to_string()
}

/// The key of a template card's "Approve once" button.
pub(crate) fn once_key(card: &Value) -> String {
    card["button_list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["key"].as_str())
        .find(|k| k.contains(r#""choice":"once""#))
        .unwrap_or_else(|| panic!("no approve-once button in {card:#}"))
        .to_owned()
}

pub(crate) fn click(msgid: &str, user: &str, key: &str, task_id: &str) -> String {
    json!({
        "msgid": msgid, "aibotid": "bot1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": user}, "msgtype": "event",
        "event": {"eventtype": "template_card_event", "template_card_event": {
            "card_type": "button_interaction", "event_key": key, "task_id": task_id}},
    })
    .to_string()
}

pub(crate) async fn parked(app: &WeComApp) -> InboxItem {
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    eventually("the approval parked in the inbox", PATIENCE, || async {
        app.store
            .inbox()
            .list(&tenant, &InboxFilter::default(), 10)
            .await
            .unwrap()
            .into_iter()
            .next()
    })
    .await
}

#[tokio::test]
async fn url_verification_answers_the_echostr_and_a_bad_signature_is_refused() {
    let app = wecom_app(SHELL).await;
    let echostr = app.crypto.encrypt_with([7; 16], "1616140317555161061");
    let now = crate::support::unix_now_s();
    let signature = app.crypto.signature(&now, "263014780", &echostr);
    let encoded: String = url::form_urlencoded::byte_serialize(echostr.as_bytes()).collect();
    let get_at = |signature: String, timestamp: &str| {
        Request::builder()
            .uri(format!(
                "/v1/platforms/wecom/callback?msg_signature={signature}&timestamp={timestamp}&nonce=263014780&echostr={encoded}"
            ))
            .body(Body::empty())
            .unwrap()
    };
    let get = |signature: String| get_at(signature, &now);
    // A correctly signed request from long ago is a replay.
    let old = app.crypto.signature("1409659589", "263014780", &echostr);
    let response = app
        .router
        .clone()
        .oneshot(get_at(old, "1409659589"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = app.router.clone().oneshot(get(signature)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(&body[..], b"1616140317555161061");
    let response = app
        .router
        .clone()
        .oneshot(get("0".repeat(40)))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // A callback for another robot's key does not decrypt.
    let (status, _) = app.post("{}").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn an_encrypted_mention_gets_a_streamed_answer() {
    let app = wecom_app(STREAMED).await;
    let (status, reply) = app.post(&mention("M1", "count to ten", &app.fake)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["msgtype"], "stream");
    assert_eq!(reply["stream"]["finish"], false);
    let stream = reply["stream"]["id"].as_str().unwrap().to_owned();
    let seen = app.follow(&stream).await;
    let last = seen.last().unwrap();
    assert!(
        last.contains("one two three four five six seven eight nine ten"),
        "{seen:#?}"
    );
    // It streamed: some refresh showed part of the answer before the end.
    assert!(
        seen.iter().any(|s| s.contains("one") && !s.contains("ten")),
        "no partial answer among {seen:#?}"
    );
    // Once finished, it stays as it is.
    assert_eq!(app.refresh(&stream).await, (last.clone(), true));
}

#[tokio::test]
async fn an_approver_click_updates_the_card_for_everyone_and_a_stranger_changes_nothing() {
    let app = wecom_app(SHELL).await;
    let (_, reply) = app.post(&mention("M1", "run it", &app.fake)).await;
    let stream = reply["stream"]["id"].as_str().unwrap().to_owned();
    let item = parked(&app).await;
    // The card rides on the message's stream (WeCom refuses a lone template card while the
    // stream is open): the next refresh's answer carries it, once.
    let template = app.card_on(&stream).await;
    assert_eq!(template["card_type"], "button_interaction");
    assert!(template.to_string().contains("echo hi"), "{template:#}");
    let task_id = template["task_id"].as_str().unwrap().to_owned();
    let task_id = task_id.as_str();
    let once = once_key(&template);

    // A stranger's click: only the stranger's copy of the card changes, saying why; the item
    // is still pending.
    let (status, answer) = app.post(&click("C1", "stranger", &once, task_id)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["userids"], json!(["stranger"]), "{answer:#}");
    assert!(
        answer["template_card"].to_string().contains("⛔ Only"),
        "{answer:#}"
    );
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    assert_eq!(
        crate::support::inbox_state(&app.store, &tenant, &item.id).await,
        InboxItemState::Pending
    );

    // The admin approves: the answer replaces the card for everyone (no `userids`) within 5 s.
    let started = Instant::now();
    let (status, answer) = app.post(&click("C2", "boss", &once, task_id)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["response_type"], "update_template_card",
        "{answer:#}"
    );
    assert!(answer.get("userids").is_none());
    let updated = &answer["template_card"];
    assert_eq!(updated["task_id"], task_id);
    assert_eq!(updated["card_type"], "text_notice");
    assert!(
        updated.to_string().contains("Approved by boss"),
        "{updated:#}"
    );

    // The turn goes on in the message's stream; the response_url was not needed.
    let seen = app.follow(&stream).await;
    assert!(seen.last().unwrap().contains("Done."), "{seen:#?}");
    assert!(calls(&app.fake, "/response/").await.is_empty());
    // A repeated click changes nothing: the card still shows who approved.
    let (_, again) = app.post(&click("C3", "ana", &once, task_id)).await;
    assert!(again.to_string().contains("Approved by boss"), "{again:#}");
}

#[tokio::test]
async fn duplicate_deliveries_run_one_turn_and_share_one_stream() {
    let app = wecom_app(SHELL).await;
    let mut streams = Vec::new();
    for _ in 0..3 {
        let (status, reply) = app.post(&mention("M-dup", "run it", &app.fake)).await;
        assert_eq!(status, StatusCode::OK);
        streams.push(reply["stream"]["id"].clone());
    }
    assert!(streams.windows(2).all(|w| w[0] == w[1]), "{streams:?}");
    parked(&app).await;
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    // Ana's own conversation in the group.
    let session = thread_session(&app.store, Surface::Wecom, CORP, CHAT, "@ana#0")
        .await
        .unwrap();
    let events = app
        .store
        .events()
        .list_after(&tenant, &session.id, 0, 1000)
        .await
        .unwrap();
    let turns = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TurnStart { .. }))
        .count();
    assert_eq!(turns, 1, "one turn for three deliveries of one message");
}

#[tokio::test]
async fn an_answer_over_the_cap_arrives_complete_in_two_messages() {
    let lines: Vec<String> = (0..260)
        .map(|i| format!("Line {i:03} {}", "x".repeat(100)))
        .collect();
    let answer = lines.join("\n\n");
    assert!(answer.len() > 20_480);
    let script = json!({"conversations": [{"when": "*", "turns": [{"text": answer}]}]}).to_string();
    let app = wecom_app(&script).await;
    let (_, reply) = app.post(&mention("M-long", "write a lot", &app.fake)).await;
    let stream = reply["stream"]["id"].as_str().unwrap().to_owned();
    let seen = app.follow(&stream).await;
    let first = seen.last().unwrap();
    assert!(first.len() <= 20_480, "{} bytes", first.len());
    assert!(first.ends_with("↓ Continued below"), "{first}");
    let sent = wait_for(
        &app.fake,
        "/response/M-long",
        "the rest of the answer",
        |calls| !calls.is_empty(),
    )
    .await;
    assert_eq!(sent[0].body["msgtype"], "markdown");
    let rest = sent[0].body["markdown"]["content"].as_str().unwrap();
    assert!(rest.len() <= 20_480);
    for line in &lines {
        assert!(
            first.contains(line.as_str()) || rest.contains(line.as_str()),
            "{line} is missing"
        );
    }
    assert_eq!(calls(&app.fake, "/response/").await.len(), 1);
}
