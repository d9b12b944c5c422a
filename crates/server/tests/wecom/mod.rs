//! The WeCom smart robot end to end, in process: encrypted callbacks in (messages, stream
//! refreshes, card clicks), sealed replies back, and the one further answer a message takes
//! through its `response_url`, posted to a fake WeCom; the long connection; and the self-built
//! app ([`app`]).

mod app;

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
use workmate_store::{InboxFilter, InboxItem, InboxItemState, Store};
use workmate_wxcrypto::Crypto;

use crate::router::app_with_script;
use crate::support::{calls, eventually, thread_session, wait_for};

const TOKEN: &str = "QDG6eK";
const AES_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";
const CORP: &str = "ww_acme";
const CHAT: &str = "wr_group_1";
const SHELL: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;
const STREAMED: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "one two three four five six seven eight nine ten", "chunk_delay_ms": 90}]}]}"#;

struct WeComApp {
    router: Router,
    store: Store,
    fake: MockServer,
    crypto: Crypto,
    _surface: Arc<WeComSurface>,
    _dir: tempfile::TempDir,
}

async fn wecom_app(script: &str) -> WeComApp {
    let fake = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"errcode": 0, "errmsg": "ok"})),
        )
        .mount(&fake)
        .await;
    let app = app_with_script(script).await;
    let config = WeComConfig::callback(CORP, TOKEN.into(), AES_KEY.into(), &fake.uri())
        .with_admins(vec!["boss".into()]);
    let chat = app.state.chat.clone();
    chat.attach_scheduler(app.state.scheduler.clone());
    let surface = WeComSurface::new(&config, &chat).unwrap();
    chat.start();
    let state = AppState {
        wecom: Some(Arc::clone(&surface)),
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
    /// Posts `plaintext` encrypted and signed, as WeCom does; the status and the decrypted
    /// reply (`Null` for an empty one).
    async fn post(&self, plaintext: &str) -> (StatusCode, Value) {
        let encrypt = self.crypto.encrypt_with(*b"0123456789abcdef", plaintext);
        let signature = self.crypto.signature("1700000000", "nonce1", &encrypt);
        let request = Request::builder()
            .method("POST")
            .uri(format!(
                "/v1/platforms/wecom/callback?msg_signature={signature}&timestamp=1700000000&nonce=nonce1"
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
    async fn refresh(&self, stream_id: &str) -> (String, bool) {
        let (status, reply) = self.post(&refresh(stream_id)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(reply["msgtype"], "stream");
        assert_eq!(reply["stream"]["id"], stream_id);
        (
            reply["stream"]["content"].as_str().unwrap().to_owned(),
            reply["stream"]["finish"].as_bool().unwrap(),
        )
    }

    /// Refreshes the stream as WeCom does until it is finished; every content seen.
    async fn follow(&self, stream_id: &str) -> Vec<String> {
        let started = Instant::now();
        let mut seen = Vec::new();
        loop {
            let (content, finish) = self.refresh(stream_id).await;
            seen.push(content);
            if finish {
                return seen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "never finished: {seen:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn mention(msgid: &str, text: &str, fake: &MockServer) -> String {
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

fn click(msgid: &str, user: &str, key: &str, task_id: &str) -> String {
    json!({
        "msgid": msgid, "aibotid": "bot1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": user}, "msgtype": "event",
        "event": {"eventtype": "template_card_event", "template_card_event": {
            "card_type": "button_interaction", "event_key": key, "task_id": task_id}},
    })
    .to_string()
}

async fn parked(app: &WeComApp) -> InboxItem {
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    eventually(|| async {
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
    let signature = app.crypto.signature("1409659589", "263014780", &echostr);
    let encoded: String = url::form_urlencoded::byte_serialize(echostr.as_bytes()).collect();
    let get = |signature: String| {
        Request::builder()
            .uri(format!(
                "/v1/platforms/wecom/callback?msg_signature={signature}&timestamp=1409659589&nonce=263014780&echostr={encoded}"
            ))
            .body(Body::empty())
            .unwrap()
    };
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
    let sent = wait_for(&app.fake, "/response/M1", "the approval card", |calls| {
        !calls.is_empty()
    })
    .await;
    let card = &sent[0].body;
    assert_eq!(card["msgtype"], "template_card");
    let template = &card["template_card"];
    assert_eq!(template["card_type"], "button_interaction");
    assert!(template.to_string().contains("echo hi"), "{template:#}");
    let task_id = template["task_id"].as_str().unwrap();
    let once = template["button_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["key"].as_str().unwrap())
        .find(|k| k.contains(item.id.as_str()) && k.contains("once"))
        .unwrap_or_else(|| panic!("no approve-once button in {template:#}"));

    // A stranger's click: an empty answer (the card stays), the item still pending.
    let (status, answer) = app.post(&click("C1", "stranger", once, task_id)).await;
    assert_eq!((status, answer), (StatusCode::OK, Value::Null));
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    let pending = app
        .store
        .inbox()
        .get(&tenant, &item.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pending.state, InboxItemState::Pending);

    // The admin approves: the answer replaces the card for everyone (no `userids`) within 5 s.
    let started = Instant::now();
    let (status, answer) = app.post(&click("C2", "boss", once, task_id)).await;
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

    // The turn goes on in the message's stream.
    let seen = app.follow(&stream).await;
    assert!(seen.last().unwrap().contains("Done."), "{seen:#?}");
    // A repeated click changes nothing: the card still shows who approved.
    let (_, again) = app.post(&click("C3", "ana", once, task_id)).await;
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
    let session = thread_session(&app.store, Surface::Wecom, CORP, CHAT, "")
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

/// Over the long connection: a pushed message is stored, its answer's snapshots are pushed back
/// with the message's `req_id`, and an answer over the cap goes on in further messages to the
/// chat, complete.
#[tokio::test]
async fn over_the_long_connection_answers_stream_back_and_long_ones_go_on_in_the_chat() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;

    let lines: Vec<String> = (0..260)
        .map(|i| format!("Line {i:03} {}", "y".repeat(100)))
        .collect();
    let answer = lines.join("\n\n");
    let script = json!({"conversations": [{"when": "*", "turns": [{"text": answer}]}]}).to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let app = app_with_script(&script).await;
    let mut config =
        WeComConfig::callback(CORP, TOKEN.into(), AES_KEY.into(), "http://127.0.0.1:9");
    config.mode = workmate_server::config::WeComMode::LongConnection;
    config.bot_id = Some("aibot-1".into());
    config.secret = Some("bot-secret".into());
    let chat = app.state.chat.clone();
    let _surface = WeComSurface::with_socket_url(&config, &chat, &url).unwrap();
    chat.start();

    let (stream, _) = tokio::time::timeout(Duration::from_secs(20), listener.accept())
        .await
        .expect("workmate connects")
        .unwrap();
    let mut peer = tokio_tungstenite::accept_async(stream).await.unwrap();
    let subscribe = next_frame(&mut peer).await;
    assert_eq!(subscribe["cmd"], "aibot_subscribe");
    assert_eq!(subscribe["body"]["bot_id"], "aibot-1");
    let ack = |frame: &Value| json!({"headers": frame["headers"], "errcode": 0, "errmsg": "ok"});
    peer.send(Message::text(ack(&subscribe).to_string()))
        .await
        .unwrap();
    let message = json!({"msgid": "W1", "aibotid": "aibot-1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": "ana"}, "msgtype": "text", "text": {"content": "@workmate write a lot"}});
    let callback =
        json!({"cmd": "aibot_msg_callback", "headers": {"req_id": "req-W1"}, "body": message});
    peer.send(Message::text(callback.to_string()))
        .await
        .unwrap();

    let mut streamed = Vec::new();
    let mut sent = Vec::new();
    loop {
        let frame = next_frame(&mut peer).await;
        peer.send(Message::text(ack(&frame).to_string()))
            .await
            .unwrap();
        match frame["cmd"].as_str().unwrap() {
            "aibot_respond_msg" => {
                assert_eq!(frame["headers"]["req_id"], "req-W1");
                let stream = frame["body"]["stream"].clone();
                streamed.push(stream);
            }
            "aibot_send_msg" => {
                assert_eq!(frame["body"]["chatid"], CHAT);
                sent.push(
                    frame["body"]["markdown"]["content"]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                );
            }
            other => panic!("unexpected {other}: {frame}"),
        }
        let finished = streamed.last().is_some_and(|s| s["finish"] == true);
        let all = |text: &str| lines.iter().all(|l| text.contains(l.as_str()));
        let shown = streamed
            .last()
            .map(|s| s["content"].as_str().unwrap().to_owned());
        if finished && all(&format!("{}{}", shown.unwrap_or_default(), sent.join(""))) {
            break;
        }
    }
    let last = streamed.last().unwrap();
    assert!(last["content"].as_str().unwrap().len() <= 20_480);
    assert!(sent.iter().all(|m| m.len() <= 20_480));
    assert!(!sent.is_empty(), "the answer went on in the chat");
    assert!(
        streamed.windows(2).all(|w| w[0]["id"] == w[1]["id"]),
        "one stream"
    );
}

/// The next frame workmate writes that is not a ping.
async fn next_frame(peer: &mut tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>) -> Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), peer.next())
            .await
            .expect("a frame in time")
            .unwrap()
            .unwrap();
        if let Message::Text(text) = message {
            let frame: Value = serde_json::from_str(&text).unwrap();
            if frame["cmd"] != "ping" {
                return frame;
            }
        }
    }
}
