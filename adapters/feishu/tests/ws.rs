//! The long connection against a fake Feishu: discovery (wiremock) hands out `ws://` URLs of a
//! raw tokio-tungstenite server that pushes protobuf frames, checks the acks and pings, answers
//! with pongs, and closes or drops connections. The server's config seconds last 1 ms here.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Barrier, mpsc};
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::BoxFuture;
use workmate_feishu::ws::frame::{BIZ_RT, Frame, Header};
use workmate_feishu::ws::{Error, FrameHandler, HandlerError, LongConnection, Timings};

const APP_ID: &str = "cli_test";
const APP_SECRET: &str = "app-secret-test";
const WAIT: Duration = Duration::from_secs(5);
const TOAST: &[u8] = br#"{"toast":{"type":"success","content":"Approved"}}"#;
/// An hour of pings: none but the first unless a pong shortens it.
const CONFIG: &str =
    r#"{"ReconnectCount":-1,"ReconnectInterval":20,"ReconnectNonce":5,"PingInterval":3600000}"#;

/// Records every payload; answers a card with [`TOAST`], an event with `{}`, and refuses
/// payloads marked `retry` (not taken) or `fail` (failed). Payloads marked `pair` finish only
/// once two are being handled at the same time.
#[derive(Debug)]
struct Recorder {
    seen: mpsc::UnboundedSender<(String, String)>,
    pair: Barrier,
}

impl FrameHandler for Recorder {
    fn handle(&self, kind: &str, payload: Vec<u8>) -> BoxFuture<'_, Result<Vec<u8>, HandlerError>> {
        let kind = kind.to_owned();
        Box::pin(async move {
            let text = String::from_utf8(payload).unwrap();
            self.seen.send((kind.clone(), text.clone())).unwrap();
            if text.contains("pair") {
                self.pair.wait().await;
            }
            match () {
                () if text.contains("retry") => Err(HandlerError::Retry),
                () if text.contains("fail") => Err(HandlerError::Failed("boom".into())),
                () if kind == "card" => Ok(TOAST.to_vec()),
                () => Ok(b"{}".to_vec()),
            }
        })
    }
}

/// Discovery plus the WebSocket listener it points at.
struct FakeFeishu {
    api: MockServer,
    listener: TcpListener,
}

type Socket = WebSocketStream<TcpStream>;

impl FakeFeishu {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let api = MockServer::start().await;
        let url = format!("ws://127.0.0.1:{port}/ws/v2?device_id=dev-1&service_id=7&ticket=t");
        let config: Value = serde_json::from_str(CONFIG).unwrap();
        Mock::given(method("POST"))
            .and(path("/callback/ws/endpoint"))
            .and(header("locale", "zh"))
            .and(body_json(json!({"AppID": APP_ID, "AppSecret": APP_SECRET})))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": config}}),
            ))
            .mount(&api)
            .await;
        Self { api, listener }
    }

    /// Runs a client until [`Client::stop`]; `seen` gets every payload.
    fn run(&self) -> (Client, Seen) {
        let (handler, seen) = recorder();
        let connection = connection(&self.api.uri());
        let stop = CancellationToken::new();
        let token = stop.clone();
        let task = tokio::spawn(async move { connection.run(handler, token).await });
        (Client { stop, task }, seen)
    }

    async fn accept(&self) -> Socket {
        let (stream, _) = tokio::time::timeout(WAIT, self.listener.accept())
            .await
            .expect("the client connects")
            .unwrap();
        tokio_tungstenite::accept_async(stream).await.unwrap()
    }

    async fn discoveries(&self) -> usize {
        self.api.received_requests().await.unwrap().len()
    }
}

type Seen = mpsc::UnboundedReceiver<(String, String)>;

fn recorder() -> (Arc<Recorder>, Seen) {
    let (seen, rx) = mpsc::unbounded_channel();
    let pair = Barrier::new(2);
    (Arc::new(Recorder { seen, pair }), rx)
}

/// A client of the fake Feishu at `base`, where a config second lasts a millisecond.
fn connection(base: &str) -> LongConnection {
    let timings = Timings {
        config_second: Duration::from_millis(1),
        connect_timeout: WAIT,
        drain: Duration::from_millis(500),
    };
    let secret = SecretString::from(APP_SECRET);
    LongConnection::new(base, APP_ID, secret)
        .unwrap()
        .with_timings(timings)
}

/// Runs a client against `base` until Feishu's refusal ends it.
async fn refusal(base: &str) -> Error {
    let (handler, _seen) = recorder();
    let connection = connection(base);
    let run = connection.run(handler, CancellationToken::new());
    let ended = tokio::time::timeout(WAIT, run)
        .await
        .expect("a refusal ends run");
    ended.unwrap_err()
}

struct Client {
    stop: CancellationToken,
    task: JoinHandle<Result<(), Error>>,
}

impl Client {
    /// Stops the client and checks it ends promptly and cleanly.
    async fn stop(self) {
        self.stop.cancel();
        let ended = tokio::time::timeout(WAIT, self.task)
            .await
            .expect("run ends promptly");
        assert_eq!(ended.unwrap(), Ok(()));
    }
}

async fn send(ws: &mut Socket, frame: &Frame) {
    ws.send(Message::binary(frame.encode())).await.unwrap();
}

/// The next frame the client sends.
async fn next_frame(ws: &mut Socket) -> Frame {
    loop {
        let message = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a frame in time")
            .expect("the socket is open")
            .unwrap();
        if let Message::Binary(bytes) = message {
            return Frame::decode(&bytes).unwrap();
        }
    }
}

/// The next data frame (an ack), skipping pings.
async fn next_ack(ws: &mut Socket) -> Frame {
    next_of(ws, 1).await
}

/// The next ping, skipping acks.
async fn next_ping(ws: &mut Socket) -> Frame {
    next_of(ws, 0).await
}

async fn next_of(ws: &mut Socket, method: i32) -> Frame {
    loop {
        let frame = next_frame(ws).await;
        if frame.method == method {
            return frame;
        }
    }
}

fn kv(key: &str, value: &str) -> Header {
    Header {
        key: key.into(),
        value: value.into(),
    }
}

/// A data frame of type `kind` (`event` or `card`), chunk `seq` of `sum`.
fn data(seq_id: u64, kind: &str, message_id: &str, (seq, sum): (u32, u32), payload: &str) -> Frame {
    Frame {
        seq_id,
        log_id: seq_id + 1000,
        service: 7,
        method: 1,
        headers: vec![
            kv("type", kind),
            kv("message_id", message_id),
            kv("sum", &sum.to_string()),
            kv("seq", &seq.to_string()),
            kv("trace_id", &format!("trace-{seq_id}")),
        ],
        payload: Some(payload.as_bytes().to_vec()),
        ..Frame::default()
    }
}

fn event(seq_id: u64, marker: &str) -> Frame {
    let payload = json!({"schema": "2.0", "header": {"event_id": format!("ev-{seq_id}"),
        "event_type": "im.message.receive_v1"}, "event": {"marker": marker}});
    data(
        seq_id,
        "event",
        &format!("msg-{seq_id}"),
        (0, 1),
        &payload.to_string(),
    )
}

/// An ack's code and decoded data, after checking it is `frame` with `biz_rt` added.
fn ack_of(ack: &Frame, frame: &Frame) -> (u64, Option<Vec<u8>>) {
    assert_eq!(
        (ack.seq_id, ack.log_id, ack.service, ack.method),
        (frame.seq_id, frame.log_id, 7, 1)
    );
    assert_eq!(
        ack.headers[..frame.headers.len()],
        frame.headers[..],
        "headers are kept"
    );
    assert_eq!(ack.headers.len(), frame.headers.len() + 1);
    assert!(
        ack.header(BIZ_RT).unwrap().parse::<u64>().is_ok(),
        "biz_rt in ms"
    );
    let payload: Value = serde_json::from_slice(ack.payload.as_deref().unwrap()).unwrap();
    assert_eq!(payload["headers"], json!({}));
    let data = payload["data"].as_str().map(|d| BASE64.decode(d).unwrap());
    (payload["code"].as_u64().unwrap(), data)
}

async fn seen(rx: &mut Seen) -> (String, String) {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("the handler runs")
        .unwrap()
}

#[tokio::test]
async fn events_and_card_callbacks_are_acked_with_the_handlers_answer() {
    let feishu = FakeFeishu::start().await;
    let (client, mut handled) = feishu.run();
    let mut ws = feishu.accept().await;

    let frame = event(1, "hello");
    send(&mut ws, &frame).await;
    assert_eq!(
        ack_of(&next_ack(&mut ws).await, &frame),
        (200, Some(b"{}".to_vec()))
    );
    let (kind, payload) = seen(&mut handled).await;
    assert_eq!(kind, "event");
    assert_eq!(payload.as_bytes(), frame.payload.as_deref().unwrap());

    let click = r#"{"schema":"2.0","header":{"event_type":"card.action.trigger"},"event":{"action":{"value":{"approve":"yes"}}}}"#;
    let card = data(2, "card", "msg-2", (0, 1), click);
    send(&mut ws, &card).await;
    assert_eq!(
        ack_of(&next_ack(&mut ws).await, &card),
        (200, Some(TOAST.to_vec()))
    );
    assert_eq!(
        seen(&mut handled).await,
        ("card".to_owned(), click.to_owned())
    );
    client.stop().await;
}

#[tokio::test]
async fn a_payload_in_three_chunks_out_of_order_is_handled_once_whole() {
    let feishu = FakeFeishu::start().await;
    let (client, mut handled) = feishu.run();
    let mut ws = feishu.accept().await;

    let whole = event(5, "chunked").payload.unwrap();
    let whole = String::from_utf8(whole).unwrap();
    let (a, rest) = whole.split_at(10);
    let (b, c) = rest.split_at(10);
    let last = data(5, "event", "msg-5", (1, 3), b);
    for chunk in [
        data(3, "event", "msg-5", (2, 3), c),
        data(4, "event", "msg-5", (0, 3), a),
        last.clone(),
    ] {
        send(&mut ws, &chunk).await;
    }
    assert_eq!(
        ack_of(&next_ack(&mut ws).await, &last).0,
        200,
        "the last chunk is acked"
    );
    assert_eq!(seen(&mut handled).await, ("event".to_owned(), whole));

    // Nothing else was handled in between: the next payload is the next event.
    send(&mut ws, &event(6, "after")).await;
    assert_eq!(next_ack(&mut ws).await.seq_id, 6);
    assert!(seen(&mut handled).await.1.contains("after"));
    client.stop().await;
}

#[tokio::test]
async fn payloads_are_handled_concurrently() {
    let feishu = FakeFeishu::start().await;
    let (client, mut handled) = feishu.run();
    let mut ws = feishu.accept().await;
    // Each handler waits for the other: handled one at a time, neither would finish.
    send(&mut ws, &event(1, "pair")).await;
    send(&mut ws, &event(2, "pair")).await;
    let mut acked = [
        next_ack(&mut ws).await.seq_id,
        next_ack(&mut ws).await.seq_id,
    ];
    acked.sort_unstable();
    assert_eq!(acked, [1, 2]);
    seen(&mut handled).await;
    seen(&mut handled).await;
    client.stop().await;
}

#[tokio::test]
async fn a_payload_not_taken_is_not_acked_and_a_failure_is_acked_500() {
    let feishu = FakeFeishu::start().await;
    let (client, mut handled) = feishu.run();
    let mut ws = feishu.accept().await;

    send(&mut ws, &event(1, "retry")).await;
    assert!(seen(&mut handled).await.1.contains("retry"));
    let failing = event(2, "fail");
    send(&mut ws, &failing).await;
    assert_eq!(ack_of(&next_ack(&mut ws).await, &failing), (500, None));
    send(&mut ws, &event(3, "fine")).await;
    assert_eq!(next_ack(&mut ws).await.seq_id, 3, "frame 1 was never acked");
    client.stop().await;
}

#[tokio::test]
async fn pings_carry_the_service_id_and_a_pong_can_change_their_interval() {
    let feishu = FakeFeishu::start().await;
    let (client, _handled) = feishu.run();
    let mut ws = feishu.accept().await;

    let ping = next_ping(&mut ws).await;
    assert_eq!(
        (ping.service, ping.method, ping.message_type()),
        (7, 0, "ping")
    );
    // With the discovered interval the next ping is an hour away; the pong makes it 10 ms.
    let mut pong = Frame::ping(7);
    pong.headers = vec![kv("type", "pong")];
    pong.payload = Some(
        br#"{"ReconnectCount":-1,"ReconnectInterval":20,"ReconnectNonce":5,"PingInterval":10}"#
            .to_vec(),
    );
    send(&mut ws, &pong).await;
    let again = next_ping(&mut ws).await;
    assert_eq!((again.service, again.message_type()), (7, "ping"));
    client.stop().await;
}

#[tokio::test]
async fn a_dropped_connection_is_replaced_and_delivery_goes_on() {
    let feishu = FakeFeishu::start().await;
    let (client, mut handled) = feishu.run();
    let mut first = feishu.accept().await;
    send(&mut first, &event(1, "before")).await;
    assert_eq!(next_ack(&mut first).await.seq_id, 1);
    seen(&mut handled).await;
    drop(first);

    let mut second = feishu.accept().await;
    assert_eq!(
        feishu.discoveries().await,
        2,
        "the endpoint is discovered again"
    );
    send(&mut second, &event(2, "after")).await;
    assert_eq!(next_ack(&mut second).await.seq_id, 2);
    assert!(seen(&mut handled).await.1.contains("after"));
    client.stop().await;
}

#[tokio::test]
async fn a_closed_connection_is_closed_only_once_its_successor_is_dialed() {
    let feishu = FakeFeishu::start().await;
    let (client, _handled) = feishu.run();
    let mut first = feishu.accept().await;
    send(&mut first, &event(1, "before")).await;
    next_ack(&mut first).await;
    first.send(Message::Close(None)).await.unwrap();

    // Until the successor connects, the old connection is not closed (a late ping may come).
    let second = loop {
        tokio::select! {
            biased;
            accepted = feishu.listener.accept() => break accepted.unwrap().0,
            message = first.next() => match message {
                Some(Ok(Message::Binary(_))) => {}
                other => panic!("the old connection went first: {other:?}"),
            },
        }
    };
    let _second = tokio_tungstenite::accept_async(second).await.unwrap();
    // Now the old one is closed.
    let end = tokio::time::timeout(WAIT, async {
        while let Some(Ok(message)) = first.next().await {
            if message.is_close() {
                break;
            }
        }
    });
    end.await.expect("the old connection is closed");
    client.stop().await;
}

#[tokio::test]
async fn a_forbidden_upgrade_ends_run_with_feishus_handshake_headers() {
    let feishu = FakeFeishu::start().await;
    let server = async {
        let (mut stream, _) = feishu.listener.accept().await.unwrap();
        let mut request = [0u8; 2048];
        let _ = stream.read(&mut request).await.unwrap();
        let response = "HTTP/1.1 403 Forbidden\r\nHandshake-Status: 403\r\n\
                        Handshake-Msg: app is banned\r\nContent-Length: 0\r\n\r\n";
        stream.write_all(response.as_bytes()).await.unwrap();
    };
    let base = feishu.api.uri();
    let (error, ()) = tokio::join!(refusal(&base), server);
    assert!(matches!(error, Error::Refused { code: 403, .. }), "{error}");
    assert!(error.to_string().contains("app is banned"), "{error}");
}

#[tokio::test]
async fn discovery_retries_while_busy_and_stops_on_bad_credentials() {
    let feishu = FakeFeishu::start().await;
    let answer = |body: Value| ResponseTemplate::new(200).set_body_json(body);
    Mock::given(path("/callback/ws/endpoint"))
        .respond_with(answer(json!({"code": 1, "msg": "system busy"})))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&feishu.api)
        .await;
    let (client, _handled) = feishu.run();
    let _ws = feishu.accept().await;
    assert_eq!(
        feishu.discoveries().await,
        3,
        "two busy answers, then the URL"
    );
    client.stop().await;

    Mock::given(path("/callback/ws/endpoint"))
        .respond_with(answer(json!({"code": 514, "msg": "auth failed"})))
        .with_priority(1)
        .mount(&feishu.api)
        .await;
    let error = refusal(&feishu.api.uri()).await;
    assert!(matches!(error, Error::Refused { code: 514, .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("App Secret") && !message.contains(APP_SECRET),
        "{message}"
    );
}
