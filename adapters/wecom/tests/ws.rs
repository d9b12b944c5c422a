//! The long connection against a fake WeCom: a raw tokio-tungstenite server on a local port
//! that answers the subscription, pushes callbacks, answers (or ignores) pings and replies, and
//! drops connections. Backoffs last milliseconds here; pings come hourly unless a test says so.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use workmate_adapter::BoxFuture;
use workmate_wecom::ws::{
    Ack, EVENT_CALLBACK, Error, FrameHandler, LongConnection, MISSED_PINGS, MSG_CALLBACK,
    RESPOND_MSG, SEND_MSG, SendError, Sender, Status, Timings,
};

const BOT_ID: &str = "aibot-test";
const SECRET: &str = "bot-secret-test";
const WAIT: Duration = Duration::from_secs(5);
const HOUR: Duration = Duration::from_secs(3600);

fn timings() -> Timings {
    Timings {
        ping_every: HOUR,
        connect_timeout: WAIT,
        ack_timeout: WAIT,
        send_wait: WAIT,
        backoff_first: Duration::from_millis(10),
        backoff_max: Duration::from_millis(40),
        refused_wait: HOUR,
        replaced_wait: HOUR,
        drain: Duration::from_millis(200),
    }
}

type Seen = (String, String, Value);

/// Records every callback; answers a message saying `echo` with a finished stream, and never
/// finishes one saying `slow`.
#[derive(Debug)]
struct Recorder {
    seen: mpsc::UnboundedSender<Seen>,
    replies: mpsc::UnboundedSender<Result<Ack, SendError>>,
    sender: Sender,
}

impl FrameHandler for Recorder {
    fn handle(&self, cmd: &str, req_id: &str, body: Value) -> BoxFuture<'_, ()> {
        let (cmd, req_id) = (cmd.to_owned(), req_id.to_owned());
        Box::pin(async move {
            let text = body["text"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            self.seen.send((cmd, req_id.clone(), body)).unwrap();
            match text.as_str() {
                "slow" => std::future::pending().await,
                "echo" => {
                    let reply = self
                        .sender
                        .respond(&req_id, RESPOND_MSG, stream("echo", true));
                    self.replies.send(reply.await).unwrap();
                }
                _ => {}
            }
        })
    }
}

fn stream(content: &str, finish: bool) -> Value {
    json!({"msgtype": "stream", "stream": {"id": "s1", "finish": finish, "content": content}})
}

fn markdown(content: &str) -> Value {
    json!({"chatid": "zhangsan", "msgtype": "markdown", "markdown": {"content": content}})
}

fn message(msgid: &str, content: &str) -> Value {
    json!({"msgid": msgid, "aibotid": BOT_ID, "chattype": "single", "from": {"userid": "zhangsan"},
        "msgtype": "text", "text": {"content": content}})
}

fn event(eventtype: &str) -> Value {
    json!({"msgid": "ev", "aibotid": BOT_ID, "msgtype": "event", "from": {"userid": "zhangsan"},
        "event": {"eventtype": eventtype}})
}

/// The listener the clients connect to.
struct FakeWeCom {
    listener: TcpListener,
    url: String,
}

impl FakeWeCom {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        Self { listener, url }
    }

    async fn accept(&self) -> Peer {
        let (stream, _) = tokio::time::timeout(WAIT, self.listener.accept())
            .await
            .expect("the client connects")
            .unwrap();
        Peer(tokio_tungstenite::accept_async(stream).await.unwrap())
    }

    /// Accepts a connection and answers its subscription with errcode 0.
    async fn accept_subscribed(&self) -> Peer {
        let mut peer = self.accept().await;
        let subscribe = peer.next_frame().await;
        assert_eq!(subscribe["cmd"], "aibot_subscribe");
        peer.answer(&subscribe, 0, Value::Null).await;
        peer
    }
}

/// WeCom's end of one connection.
struct Peer(WebSocketStream<TcpStream>);

impl Peer {
    /// The next frame the client wrote, as JSON.
    async fn next_frame(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(WAIT, self.0.next())
                .await
                .expect("a frame in time")
                .expect("the socket is open")
                .unwrap();
            if let Message::Text(text) = message {
                return serde_json::from_str(&text).unwrap();
            }
        }
    }

    /// The next frame that is not a ping.
    async fn next_request(&mut self) -> Value {
        loop {
            let frame = self.next_frame().await;
            if frame["cmd"] != "ping" {
                return frame;
            }
        }
    }

    /// Answers `frame` with `errcode` (and `body` unless null).
    async fn answer(&mut self, frame: &Value, errcode: i64, body: Value) {
        let errmsg = if errcode == 0 { "ok" } else { "refused" };
        let mut answer = json!({"headers": frame["headers"], "errcode": errcode, "errmsg": errmsg});
        if !body.is_null() {
            answer["body"] = body;
        }
        self.send(answer).await;
    }

    async fn push(&mut self, cmd: &str, req_id: &str, body: Value) {
        self.send(json!({"cmd": cmd, "headers": {"req_id": req_id}, "body": body}))
            .await;
    }

    async fn send(&mut self, frame: Value) {
        self.0.send(Message::text(frame.to_string())).await.unwrap();
    }

    /// The text frames the client writes until it closes the connection.
    async fn frames_until_closed(&mut self) -> Vec<Value> {
        let mut frames = Vec::new();
        loop {
            match tokio::time::timeout(WAIT, self.0.next())
                .await
                .expect("the client closes the connection in time")
            {
                Some(Ok(Message::Text(text))) => frames.push(serde_json::from_str(&text).unwrap()),
                Some(Ok(Message::Close(_)) | Err(_)) | None => return frames,
                Some(Ok(_)) => {}
            }
        }
    }
}

/// A running client and what its handler saw.
struct Client {
    connection: Arc<LongConnection>,
    sender: Sender,
    status: watch::Receiver<Status>,
    seen: mpsc::UnboundedReceiver<Seen>,
    replies: mpsc::UnboundedReceiver<Result<Ack, SendError>>,
    stop: CancellationToken,
    task: JoinHandle<Result<(), Error>>,
}

impl Client {
    fn start(fake: &FakeWeCom, timings: Timings) -> Self {
        let secret = SecretString::from(SECRET);
        let connection = LongConnection::new(&fake.url, BOT_ID, secret)
            .unwrap()
            .with_timings(timings);
        let connection = Arc::new(connection);
        let (seen_tx, seen) = mpsc::unbounded_channel();
        let (replies_tx, replies) = mpsc::unbounded_channel();
        let sender = connection.sender();
        let handler = Arc::new(Recorder {
            seen: seen_tx,
            replies: replies_tx,
            sender: sender.clone(),
        });
        let stop = CancellationToken::new();
        let running = Arc::clone(&connection);
        let token = stop.clone();
        let task = tokio::spawn(async move { running.run(handler, token).await });
        let status = connection.status();
        Self {
            connection,
            sender,
            status,
            seen,
            replies,
            stop,
            task,
        }
    }

    async fn status_becomes(&mut self, wanted: impl FnMut(&Status) -> bool) -> Status {
        let status = tokio::time::timeout(WAIT, self.status.wait_for(wanted))
            .await
            .expect("the status changes in time")
            .unwrap();
        status.clone()
    }

    async fn seen(&mut self) -> Seen {
        let seen = tokio::time::timeout(WAIT, self.seen.recv()).await;
        seen.expect("the handler runs").unwrap()
    }

    /// Stops the client and checks it ends promptly and cleanly; gives back what the handler
    /// saw and was not yet taken.
    async fn stop(self) -> mpsc::UnboundedReceiver<Seen> {
        self.stop.cancel();
        let ended = tokio::time::timeout(WAIT, self.task)
            .await
            .expect("run ends promptly");
        assert_eq!(ended.unwrap(), Ok(()));
        assert_eq!(*self.status.borrow(), Status::Stopped);
        self.seen
    }
}

/// A client subscribed on its first connection.
async fn connected(fake: &FakeWeCom, timings: Timings) -> (Client, Peer) {
    let mut client = Client::start(fake, timings);
    let peer = fake.accept_subscribed().await;
    client.status_becomes(|s| *s == Status::Online).await;
    (client, peer)
}

#[tokio::test]
async fn the_subscription_names_the_bot_and_its_answer_brings_the_connection_online() {
    let fake = FakeWeCom::start().await;
    let mut client = Client::start(&fake, timings());
    let mut peer = fake.accept().await;

    let subscribe = peer.next_frame().await;
    assert_eq!(subscribe["cmd"], "aibot_subscribe");
    assert_eq!(
        subscribe["body"],
        json!({"bot_id": BOT_ID, "secret": SECRET})
    );
    let req_id = subscribe["headers"]["req_id"].as_str().unwrap();
    let (ms, random) = req_id
        .strip_prefix("aibot_subscribe_")
        .and_then(|rest| rest.split_once('_'))
        .unwrap();
    assert!(ms.parse::<u64>().is_ok() && !random.is_empty(), "{req_id}");
    assert_eq!(
        *client.status.borrow(),
        Status::Connecting,
        "not before the answer"
    );

    peer.answer(&subscribe, 0, Value::Null).await;
    client.status_becomes(|s| *s == Status::Online).await;
    client.stop().await;
    assert!(peer.frames_until_closed().await.is_empty());
}

#[tokio::test]
async fn a_refused_subscription_names_the_errcode_and_waits_long() {
    let fake = FakeWeCom::start().await;
    let short_sends = Timings {
        send_wait: Duration::from_millis(100),
        ..timings()
    };
    let mut client = Client::start(&fake, short_sends);
    let mut peer = fake.accept().await;
    let subscribe = peer.next_frame().await;
    peer.answer(&subscribe, 853_000, Value::Null).await;

    let status = client
        .status_becomes(|s| matches!(s, Status::Waiting { .. }))
        .await;
    let Status::Waiting { error, retry_in } = &status else {
        unreachable!()
    };
    assert!(
        matches!(error, Error::Refused { errcode: 853_000, errmsg } if errmsg == "refused"),
        "{error:?}"
    );
    assert!(
        retry_in >= &(HOUR * 3 / 4),
        "a refusal waits long: {retry_in:?}"
    );
    let shown = status.to_string();
    assert!(
        shown.contains("853000") && shown.contains("Bot ID and Secret"),
        "{shown}"
    );
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(
        peer.frames_until_closed().await.is_empty(),
        "the socket is closed"
    );

    // Meanwhile a send fails after its wait, saying why.
    let error = client
        .sender
        .send(SEND_MSG, markdown("hi"))
        .await
        .unwrap_err();
    assert!(matches!(error, SendError::NotConnected { .. }), "{error:?}");
    assert!(
        error.is_retryable() && error.to_string().contains("853000"),
        "{error}"
    );
    // Stopping during the long wait is prompt.
    client.stop().await;
}

#[tokio::test]
async fn callbacks_reach_the_handler_and_its_reply_is_answered() {
    let fake = FakeWeCom::start().await;
    let (mut client, mut peer) = connected(&fake, timings()).await;

    peer.push(MSG_CALLBACK, "req-1", message("m1", "echo"))
        .await;
    let seen = client.seen().await;
    assert_eq!(
        seen,
        (
            MSG_CALLBACK.to_owned(),
            "req-1".to_owned(),
            message("m1", "echo")
        )
    );
    let reply = peer.next_request().await;
    assert_eq!(
        reply,
        json!({"cmd": RESPOND_MSG, "headers": {"req_id": "req-1"}, "body": stream("echo", true)})
    );
    peer.answer(&reply, 0, Value::Null).await;
    let answered = tokio::time::timeout(WAIT, client.replies.recv())
        .await
        .unwrap();
    let expected = Ack {
        req_id: "req-1".to_owned(),
        body: Value::Null,
    };
    assert_eq!(answered.unwrap(), Ok(expected));

    peer.push(EVENT_CALLBACK, "req-2", event("enter_chat"))
        .await;
    let seen = client.seen().await;
    assert_eq!(
        seen,
        (
            EVENT_CALLBACK.to_owned(),
            "req-2".to_owned(),
            event("enter_chat")
        )
    );
    client.stop().await;
}

#[tokio::test]
async fn replies_to_one_req_id_go_out_in_order_each_after_the_previous_answer() {
    let fake = FakeWeCom::start().await;
    let (client, mut peer) = connected(&fake, timings()).await;
    let sender = client.sender.clone();
    let both = tokio::spawn(async move {
        tokio::join!(
            sender.respond("req-7", RESPOND_MSG, stream("Thinking", false)),
            sender.respond("req-7", RESPOND_MSG, stream("Done", true)),
        )
    });
    let first = peer.next_request().await;
    assert_eq!(first["body"], stream("Thinking", false));

    // The second reply waits for the first's answer, so a send started now overtakes it.
    let sender = client.sender.clone();
    let probe = tokio::spawn(async move { sender.send(SEND_MSG, markdown("probe")).await });
    let overtaking = peer.next_request().await;
    assert_eq!(overtaking["body"], markdown("probe"), "{overtaking}");
    peer.answer(&overtaking, 0, Value::Null).await;
    assert!(probe.await.unwrap().is_ok());

    peer.answer(&first, 0, Value::Null).await;
    let second = peer.next_request().await;
    assert_eq!(second["headers"]["req_id"], "req-7");
    assert_eq!(second["body"], stream("Done", true));
    peer.answer(&second, 0, Value::Null).await;
    let (first, second) = both.await.unwrap();
    assert_eq!(
        (first.unwrap().req_id, second.unwrap().req_id),
        ("req-7".into(), "req-7".into())
    );
    client.stop().await;
}

#[tokio::test]
async fn proactive_sends_get_fresh_req_ids_and_a_refusal_carries_the_errcode() {
    let fake = FakeWeCom::start().await;
    let (client, mut peer) = connected(&fake, timings()).await;
    let sender = client.sender.clone();
    let sending = tokio::spawn(async move { sender.send(SEND_MSG, markdown("hello")).await });
    let frame = peer.next_request().await;
    assert_eq!(
        (&frame["cmd"], &frame["body"]),
        (&json!(SEND_MSG), &markdown("hello"))
    );
    let first_id = frame["headers"]["req_id"].as_str().unwrap().to_owned();
    assert!(first_id.starts_with("aibot_send_msg_"), "{first_id}");
    peer.answer(&frame, 0, json!({"msgid": "sent-1"})).await;
    let ack = sending.await.unwrap().unwrap();
    assert_eq!(
        (ack.req_id.as_str(), ack.body),
        (first_id.as_str(), json!({"msgid": "sent-1"}))
    );

    let sender = client.sender.clone();
    let sending = tokio::spawn(async move { sender.send(SEND_MSG, markdown("again")).await });
    let frame = peer.next_request().await;
    let second_id = frame["headers"]["req_id"].as_str().unwrap().to_owned();
    assert_ne!(second_id, first_id, "every send has its own req_id");
    peer.answer(&frame, 40_058, Value::Null).await;
    let error = sending.await.unwrap().unwrap_err();
    assert_eq!(error.errcode(), Some(40_058));
    assert!(!error.is_retryable());
    assert!(error.to_string().contains("40058") && error.to_string().contains(&second_id));
    client.stop().await;
}

#[tokio::test]
async fn answered_pings_keep_the_link_and_two_unanswered_ones_replace_it() {
    let fake = FakeWeCom::start().await;
    let pinging = Timings {
        ping_every: Duration::from_millis(200),
        ..timings()
    };
    let (mut client, mut peer) = connected(&fake, pinging).await;
    for _ in 0..3 {
        let ping = peer.next_frame().await;
        assert_eq!(ping["cmd"], "ping");
        assert!(ping.get("body").is_none(), "{ping}");
        let req_id = ping["headers"]["req_id"].as_str().unwrap();
        assert!(req_id.starts_with("ping_"), "{req_id}");
        peer.answer(&ping, 0, Value::Null).await;
    }
    let unanswered = peer.frames_until_closed().await;
    assert_eq!(unanswered.len(), MISSED_PINGS as usize, "{unanswered:?}");
    assert!(
        unanswered.iter().all(|f| f["cmd"] == "ping"),
        "{unanswered:?}"
    );

    let _second = fake.accept_subscribed().await;
    client.status_becomes(|s| *s == Status::Online).await;
    client.stop().await;
}

#[tokio::test]
async fn a_dropped_connection_comes_back_and_sends_made_meanwhile_arrive() {
    let fake = FakeWeCom::start().await;
    let (mut client, mut peer) = connected(&fake, timings()).await;
    let sender = client.sender.clone();
    let unanswered = tokio::spawn(async move {
        sender
            .respond("req-9", RESPOND_MSG, stream("part", false))
            .await
    });
    assert_eq!(peer.next_request().await["headers"]["req_id"], "req-9");
    drop(peer);
    let lost = SendError::Lost {
        cmd: RESPOND_MSG.to_owned(),
        req_id: "req-9".to_owned(),
    };
    assert_eq!(unanswered.await.unwrap(), Err(lost));

    client.status_becomes(|s| *s != Status::Online).await;
    let sender = client.sender.clone();
    let queued = tokio::spawn(async move { sender.send(SEND_MSG, markdown("after")).await });
    let mut second = fake.accept_subscribed().await;
    let frame = second.next_request().await;
    assert_eq!(frame["body"], markdown("after"));
    second.answer(&frame, 0, Value::Null).await;
    assert!(queued.await.unwrap().is_ok());
    client.stop().await;
}

#[tokio::test]
async fn a_stuck_handler_holds_up_neither_reading_nor_stop() {
    let fake = FakeWeCom::start().await;
    let (mut client, mut peer) = connected(&fake, timings()).await;
    peer.push(MSG_CALLBACK, "req-slow", message("m1", "slow"))
        .await;
    peer.push(MSG_CALLBACK, "req-next", message("m2", "hello"))
        .await;
    assert_eq!(client.seen().await.1, "req-slow");
    assert_eq!(client.seen().await.1, "req-next");

    let twice = client.connection.run(
        Arc::new(Recorder {
            seen: mpsc::unbounded_channel().0,
            replies: mpsc::unbounded_channel().0,
            sender: client.sender.clone(),
        }),
        CancellationToken::new(),
    );
    let twice = tokio::time::timeout(WAIT, twice)
        .await
        .expect("refused at once");
    assert_eq!(twice, Err(Error::AlreadyRunning));

    let sender = client.sender.clone();
    client.stop().await;
    assert!(peer.frames_until_closed().await.is_empty());
    let after = sender.send(SEND_MSG, markdown("late")).await;
    assert_eq!(
        after,
        Err(SendError::Stopped {
            cmd: SEND_MSG.to_owned()
        })
    );
}

#[tokio::test]
async fn a_disconnected_event_is_reported_and_waited_out() {
    let fake = FakeWeCom::start().await;
    let (mut client, mut peer) = connected(&fake, timings()).await;
    peer.push(EVENT_CALLBACK, "req-1", event("enter_chat"))
        .await;
    peer.push(EVENT_CALLBACK, "req-2", event("disconnected_event"))
        .await;

    let status = client
        .status_becomes(|s| matches!(s, Status::Waiting { .. }))
        .await;
    let Status::Waiting { error, retry_in } = &status else {
        unreachable!()
    };
    assert_eq!(error, &Error::Replaced);
    assert!(
        retry_in >= &(HOUR * 3 / 4),
        "another holder is waited out: {retry_in:?}"
    );
    let shown = status.to_string();
    assert!(
        shown.contains("newer connection") && shown.contains("one replica"),
        "{shown}"
    );
    assert!(
        peer.frames_until_closed().await.is_empty(),
        "the socket is closed"
    );

    assert_eq!(client.seen().await.1, "req-1");
    // Stopped, every handler call has ended: none was for the disconnected_event.
    let mut seen = client.stop().await;
    assert!(seen.try_recv().is_err());
}
