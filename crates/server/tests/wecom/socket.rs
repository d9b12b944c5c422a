//! The smart robot over the long connection: a test WeCom WebSocket server pushes callbacks and
//! takes workmate's frames.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use workmate_server::config::{WeComConfig, WeComMode};
use workmate_server::platforms::wecom::WeComSurface;

use super::{AES_KEY, CHAT, CORP, SHELL, TOKEN};
use crate::router::app_with_script;

/// WeCom's end of the connection, subscribed, and what keeps workmate running.
struct Socket {
    peer: WebSocketStream<TcpStream>,
    _surface: Arc<WeComSurface>,
    _dir: tempfile::TempDir,
}

impl Socket {
    async fn start(script: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let app = app_with_script(script).await;
        let mut config =
            WeComConfig::callback(CORP, TOKEN.into(), AES_KEY.into(), "http://127.0.0.1:9")
                .with_admins(vec!["boss".into()]);
        config.mode = WeComMode::LongConnection;
        config.bot_id = Some("aibot-1".into());
        config.secret = Some("bot-secret".into());
        let chat = app.state.chat.clone();
        let surface = WeComSurface::with_socket_url(
            &config,
            &chat,
            &workmate_net::NetworkPolicy::public_only(),
            &url,
        )
        .unwrap();
        chat.start();
        let (stream, _) = tokio::time::timeout(Duration::from_secs(20), listener.accept())
            .await
            .expect("workmate connects")
            .unwrap();
        let mut socket = Self {
            peer: tokio_tungstenite::accept_async(stream).await.unwrap(),
            _surface: surface,
            _dir: app.dir,
        };
        let subscribe = socket.next().await;
        assert_eq!(subscribe["cmd"], "aibot_subscribe");
        assert_eq!(subscribe["body"]["bot_id"], "aibot-1");
        socket.ack(&subscribe).await;
        socket
    }

    /// The next frame workmate writes that is not a ping.
    async fn next(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(20), self.peer.next())
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

    /// The next frame, acknowledged.
    async fn next_acked(&mut self) -> Value {
        let frame = self.next().await;
        self.ack(&frame).await;
        frame
    }

    async fn ack(&mut self, frame: &Value) {
        let ack = json!({"headers": frame["headers"], "errcode": 0, "errmsg": "ok"});
        self.peer
            .send(Message::text(ack.to_string()))
            .await
            .unwrap();
    }

    async fn push(&mut self, cmd: &str, req_id: &str, body: Value) {
        let frame = json!({"cmd": cmd, "headers": {"req_id": req_id}, "body": body});
        self.peer
            .send(Message::text(frame.to_string()))
            .await
            .unwrap();
    }
}

fn message(msgid: &str, text: &str) -> Value {
    json!({"msgid": msgid, "aibotid": "aibot-1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": "ana"}, "msgtype": "text", "text": {"content": format!("@workmate {text}")}})
}

/// A pushed message is stored, its answer's snapshots are pushed back with the message's
/// `req_id`, and an answer over the cap goes on in further messages to the chat, complete.
#[tokio::test]
async fn answers_stream_back_and_long_ones_go_on_in_the_chat() {
    let lines: Vec<String> = (0..260)
        .map(|i| format!("Line {i:03} {}", "y".repeat(100)))
        .collect();
    let answer = lines.join("\n\n");
    let script = json!({"conversations": [{"when": "*", "turns": [{"text": answer}]}]}).to_string();
    let mut socket = Socket::start(&script).await;
    socket
        .push("aibot_msg_callback", "req-W1", message("W1", "write a lot"))
        .await;
    let mut streamed = Vec::new();
    let mut sent = Vec::new();
    loop {
        let frame = socket.next_acked().await;
        match frame["cmd"].as_str().unwrap() {
            "aibot_respond_msg" => {
                assert_eq!(frame["headers"]["req_id"], "req-W1");
                streamed.push(frame["body"]["stream"].clone());
            }
            "aibot_send_msg" => {
                assert_eq!(frame["body"]["chatid"], CHAT);
                let content = frame["body"]["markdown"]["content"].as_str().unwrap();
                sent.push(content.to_owned());
            }
            other => panic!("unexpected {other}: {frame}"),
        }
        let finished = streamed.last().is_some_and(|s| s["finish"] == true);
        let shown = streamed
            .last()
            .map(|s| s["content"].as_str().unwrap().to_owned())
            .unwrap_or_default();
        let everything = format!("{shown}{}", sent.join(""));
        if finished && lines.iter().all(|l| everything.contains(l.as_str())) {
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

/// The approval card rides on the stream; the admin's click is answered with the updated card
/// for everyone (`aibot_respond_update_msg`, no `userids`), and the answer finishes the stream.
#[tokio::test]
async fn an_approval_rides_on_the_stream_and_a_click_updates_it_for_everyone() {
    let mut socket = Socket::start(SHELL).await;
    socket
        .push("aibot_msg_callback", "req-W2", message("W2", "run it"))
        .await;
    let card = loop {
        let frame = socket.next_acked().await;
        assert_eq!(frame["cmd"], "aibot_respond_msg", "{frame}");
        if frame["body"]["msgtype"] == "stream_with_template_card" {
            break frame["body"]["template_card"].clone();
        }
    };
    assert_eq!(card["card_type"], "button_interaction");
    let task_id = card["task_id"].as_str().unwrap();
    let once = super::once_key(&card);
    let click = json!({"msgid": "E1", "aibotid": "aibot-1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": "boss"}, "msgtype": "event", "event": {"eventtype": "template_card_event",
        "template_card_event": {"card_type": "button_interaction", "event_key": once, "task_id": task_id}}});
    socket.push("aibot_event_callback", "req-E1", click).await;
    let mut updated = None;
    let mut done = false;
    while updated.is_none() || !done {
        let frame = socket.next_acked().await;
        match frame["cmd"].as_str().unwrap() {
            "aibot_respond_update_msg" => {
                assert_eq!(frame["headers"]["req_id"], "req-E1");
                updated = Some(frame["body"].clone());
            }
            "aibot_respond_msg" => {
                let stream = &frame["body"]["stream"];
                done = stream["finish"] == true
                    && stream["content"].as_str().unwrap().contains("Done.");
            }
            other => panic!("unexpected {other}: {frame}"),
        }
    }
    let updated = updated.unwrap();
    assert_eq!(updated["response_type"], "update_template_card");
    assert!(updated.get("userids").is_none());
    assert_eq!(updated["template_card"]["task_id"], task_id);
    assert!(
        updated["template_card"]
            .to_string()
            .contains("Approved by boss"),
        "{updated:#}"
    );
}

/// Two people in one group over the long connection: Ana's write waits for her approval while
/// Bo asks something; Bo is answered on his own message, and once Ana approves, her answer
/// finishes the stream of her own message (its `req_id`), not Bo's.
#[tokio::test]
async fn a_second_person_writing_while_an_approval_waits_leaves_each_answer_on_its_own_message() {
    let script = r#"{"conversations": [
      {"when": "run it", "turns": [
        {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]},
        {"text": "Done for Ana."}]},
      {"when": "*", "turns": [{"text": "Hi Bo."}]}]}"#;
    let mut socket = Socket::start(script).await;
    socket
        .push("aibot_msg_callback", "req-A", message("A1", "run it"))
        .await;
    let card = loop {
        let frame = socket.next_acked().await;
        if frame["body"]["msgtype"] == "stream_with_template_card" {
            assert_eq!(frame["headers"]["req_id"], "req-A");
            break frame["body"]["template_card"].clone();
        }
    };
    let mut from_bo = message("B1", "hello");
    from_bo["from"]["userid"] = "bo".into();
    socket.push("aibot_msg_callback", "req-B", from_bo).await;
    loop {
        let frame = socket.next_acked().await;
        let stream = &frame["body"]["stream"];
        if stream["finish"] == true {
            assert_eq!(frame["headers"]["req_id"], "req-B", "{frame}");
            assert!(stream["content"].to_string().contains("Hi Bo."), "{frame}");
            break;
        }
    }

    let task_id = card["task_id"].as_str().unwrap();
    let once = super::once_key(&card);
    let click = json!({"msgid": "E2", "aibotid": "aibot-1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": "ana"}, "msgtype": "event", "event": {"eventtype": "template_card_event",
        "template_card_event": {"card_type": "button_interaction", "event_key": once, "task_id": task_id}}});
    socket.push("aibot_event_callback", "req-E2", click).await;
    loop {
        let frame = socket.next_acked().await;
        let stream = &frame["body"]["stream"];
        if frame["cmd"] == "aibot_respond_msg" && stream["finish"] == true {
            assert_eq!(frame["headers"]["req_id"], "req-A", "{frame}");
            assert!(
                stream["content"].to_string().contains("Done for Ana."),
                "{frame}"
            );
            break;
        }
    }
}
