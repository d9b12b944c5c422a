//! The Stream client against a fake DingTalk: `open` (wiremock) hands out a `ws://` endpoint of
//! a raw tokio-tungstenite server that pushes JSON frames, reads the acks and pings, and closes
//! or drops connections. Backoff waits last milliseconds here.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{body_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::BoxFuture;
use workmate_dingtalk::stream::{
    Error, FrameKind, HandlerError, StreamClient, StreamHandler, Timings, open,
};

use crate::support::gateway::{
    CLIENT_ID, CLIENT_SECRET, FakeDingTalk, WAIT, ack_data, downstream, eventually_holds,
    next_text, timings,
};

/// Records every message; fails those whose data contains `fail`; answers a callback with
/// `{"echo": data}` and an event with `null`.
#[derive(Debug)]
struct Recorder {
    seen: mpsc::UnboundedSender<(FrameKind, String, String, String)>,
}

impl StreamHandler for Recorder {
    fn handle(
        &self,
        kind: FrameKind,
        topic: &str,
        message_id: &str,
        data: &str,
    ) -> BoxFuture<'_, Result<Value, HandlerError>> {
        let seen = (
            kind,
            topic.to_owned(),
            message_id.to_owned(),
            data.to_owned(),
        );
        Box::pin(async move {
            let data = seen.3.clone();
            self.seen.send(seen).unwrap();
            if data.contains("fail") {
                return Err(HandlerError("not stored".into()));
            }
            Ok(match kind {
                FrameKind::Callback => {
                    json!({ "echo": serde_json::from_str::<Value>(&data).unwrap() })
                }
                FrameKind::Event => Value::Null,
            })
        })
    }
}

type Seen = mpsc::UnboundedReceiver<(FrameKind, String, String, String)>;

impl FakeDingTalk {
    fn run(&self) -> (Client, Seen) {
        run_against(&self.api.uri(), timings())
    }
}

fn run_against(base: &str, timings: Timings) -> (Client, Seen) {
    let (seen, rx) = mpsc::unbounded_channel();
    let client = StreamClient::new(base, CLIENT_ID, SecretString::from(CLIENT_SECRET))
        .unwrap()
        .with_timings(timings);
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(async move { client.run(Arc::new(Recorder { seen }), token).await });
    (Client { stop, task }, rx)
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

#[tokio::test]
async fn open_subscribes_with_the_credentials_and_the_ticket_goes_into_the_url() {
    let fake = FakeDingTalk::start().await;
    let (client, _seen) = fake.run();
    let (_ws, uri) = fake.accept().await;
    assert_eq!(uri, "/connect?ticket=ticket%2B1%2F%3D");
    let request = &fake.api.received_requests().await.unwrap()[0];
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["clientId"], CLIENT_ID);
    assert_eq!(body["clientSecret"], CLIENT_SECRET);
    assert_eq!(
        body["subscriptions"],
        json!([
            {"type": "EVENT", "topic": "*"},
            {"type": "CALLBACK", "topic": "/v1.0/im/bot/messages/get"},
            {"type": "CALLBACK", "topic": "/v1.0/card/instances/callback"},
        ])
    );
    client.stop().await;
}

#[tokio::test]
async fn a_callback_is_acked_with_the_handlers_response() {
    let fake = FakeDingTalk::start().await;
    let (client, mut seen) = fake.run();
    let (mut ws, _) = fake.accept().await;
    let robot = json!({"msgId": "msg-1", "text": {"content": "hi"}});
    ws.send(downstream(
        "CALLBACK",
        "/v1.0/im/bot/messages/get",
        "cb-1",
        &robot,
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack_data(&ack, "cb-1"), json!({"response": {"echo": robot}}));
    let (kind, topic, id, data) = seen.recv().await.unwrap();
    assert_eq!(kind, FrameKind::Callback);
    assert_eq!(
        (topic.as_str(), id.as_str()),
        ("/v1.0/im/bot/messages/get", "cb-1")
    );
    assert_eq!(serde_json::from_str::<Value>(&data).unwrap(), robot);
    client.stop().await;
}

#[tokio::test]
async fn events_are_acked_success_or_later_and_a_failed_callback_is_not_acked() {
    let fake = FakeDingTalk::start().await;
    let (client, mut seen) = fake.run();
    let (mut ws, _) = fake.accept().await;
    let card = "/v1.0/card/instances/callback";
    ws.send(downstream(
        "CALLBACK",
        card,
        "cb-fail",
        &json!({"x": "fail"}),
    ))
    .await
    .unwrap();
    // The failed callback reached the handler before the event is even sent.
    assert_eq!(seen.recv().await.unwrap().2, "cb-fail");
    ws.send(downstream(
        "EVENT",
        "chat_update_title",
        "ev-ok",
        &json!({"eventId": "e1"}),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(
        ack_data(&ack, "ev-ok"),
        json!({"status": "SUCCESS", "message": "OK"}),
        "the first ack is the event's: the failed callback got none"
    );
    ws.send(downstream(
        "EVENT",
        "chat_update_title",
        "ev-fail",
        &json!({"x": "fail"}),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    let data = ack_data(&ack, "ev-fail");
    assert_eq!(data["status"], "LATER", "{data}");
    assert!(
        data["message"].as_str().unwrap().contains("not stored"),
        "{data}"
    );
    client.stop().await;
}

#[tokio::test]
async fn a_system_ping_is_answered_with_its_data_and_websocket_pings_go_out() {
    let fake = FakeDingTalk::start().await;
    let (client, _seen) = run_against(
        &fake.api.uri(),
        Timings {
            ping_every: Duration::from_millis(20),
            ..timings()
        },
    );
    let (mut ws, _) = fake.accept().await;
    let opaque = json!({"opaque": "3f2a"});
    ws.send(downstream("SYSTEM", "ping", "ping-1", &opaque))
        .await
        .unwrap();
    let answer = next_text(&mut ws).await;
    assert_eq!(ack_data(&answer, "ping-1"), opaque);
    let ping = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(Ok(Message::Ping(_))) = ws.next().await {
                return;
            }
        }
    })
    .await;
    assert!(ping.is_ok(), "a WebSocket ping arrives");
    client.stop().await;
}

#[tokio::test]
async fn disconnect_brings_a_new_open_and_connection() {
    let fake = FakeDingTalk::start().await;
    let (client, _seen) = fake.run();
    let (mut first, _) = fake.accept().await;
    assert_eq!(fake.opens().await, 1);
    first
        .send(downstream(
            "SYSTEM",
            "disconnect",
            "d-1",
            &json!({"reason": "upgrade"}),
        ))
        .await
        .unwrap();
    let (mut second, uri) = fake.accept().await;
    assert!(uri.contains("ticket="), "{uri}");
    assert_eq!(fake.opens().await, 2, "each connection has its own open");
    // The new connection works.
    second
        .send(downstream("SYSTEM", "ping", "ping-2", &json!({"n": 2})))
        .await
        .unwrap();
    assert_eq!(
        ack_data(&next_text(&mut second).await, "ping-2"),
        json!({"n": 2})
    );
    client.stop().await;
}

#[tokio::test]
async fn a_dropped_socket_reconnects() {
    let fake = FakeDingTalk::start().await;
    let (client, _seen) = fake.run();
    let (first, _) = fake.accept().await;
    drop(first);
    let (mut second, _) = fake.accept().await;
    assert_eq!(fake.opens().await, 2);
    second
        .send(downstream("EVENT", "e", "ev-2", &json!({})))
        .await
        .unwrap();
    assert_eq!(
        ack_data(&next_text(&mut second).await, "ev-2")["status"],
        "SUCCESS"
    );
    client.stop().await;
}

#[tokio::test]
async fn a_refused_open_is_a_clear_error_and_is_retried_after_a_backoff() {
    let api = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1.0/gateway/connections/open"))
        .and(body_json(json!({
            "clientId": CLIENT_ID,
            "clientSecret": "wrong",
            "subscriptions": [
                {"type": "EVENT", "topic": "*"},
                {"type": "CALLBACK", "topic": "/v1.0/im/bot/messages/get"},
                {"type": "CALLBACK", "topic": "/v1.0/card/instances/callback"},
            ],
            "ua": concat!("workmate-dingtalk/", env!("CARGO_PKG_VERSION")),
        })))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "code": "InvalidAuthentication",
            "message": "clientSecret is invalid",
            "requestid": "r-1",
        })))
        .mount(&api)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1.0/gateway/connections/open"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "endpoint": "wss://stream.example/connect",
            "ticket": "t",
        })))
        .mount(&api)
        .await;
    let http = workmate_adapter::net::http_client().unwrap();
    let right = open::open(
        &http,
        &api.uri(),
        CLIENT_ID,
        &SecretString::from(CLIENT_SECRET),
    )
    .await;
    assert_eq!(
        right.unwrap().0.as_str(),
        "wss://stream.example/connect?ticket=t",
        "the right secret is let in"
    );
    let error = open::open(&http, &api.uri(), CLIENT_ID, &SecretString::from("wrong"))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, Error::Refused { status: 401, .. }),
        "{text}"
    );
    assert!(
        text.contains("InvalidAuthentication") && text.contains("clientSecret is invalid"),
        "{text}"
    );
    assert!(text.contains("check the app's Client ID"), "{text}");
    assert!(
        !text.contains("wrong"),
        "the secret stays out of the error: {text}"
    );

    // Run keeps trying at the backoff's pace instead of ending or spinning.
    let (seen, _rx) = mpsc::unbounded_channel();
    let client = StreamClient::new(&api.uri(), CLIENT_ID, SecretString::from("wrong"))
        .unwrap()
        .with_timings(timings());
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(async move { client.run(Arc::new(Recorder { seen }), token).await });
    eventually_holds("open is tried again after a refusal", WAIT, || async {
        // The right and the wrong secret above, then three of run's.
        api.received_requests().await.unwrap().len() >= 5
    })
    .await;
    Client { stop, task }.stop().await;
}

#[tokio::test]
async fn stop_ends_run_while_waiting_to_reconnect() {
    let api = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&api)
        .await;
    let (client, _seen) = run_against(
        &api.uri(),
        Timings {
            backoff_first: Duration::from_secs(3600),
            backoff_max: Duration::from_secs(3600),
            ..timings()
        },
    );
    eventually_holds("open was called", WAIT, || async {
        !api.received_requests().await.unwrap().is_empty()
    })
    .await;
    // Now waiting an hour to retry: stop must not wait for it.
    client.stop().await;
}
