//! A fake DingTalk: the open platform (wiremock: the token, cards, robot messages, and the
//! Stream gateway's `open`, which points at a WebSocket server the tests drive frame by frame).

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub(crate) const OPEN: &str = "/v1.0/gateway/connections/open";
pub(crate) const TOPIC_ROBOT: &str = "/v1.0/im/bot/messages/get";
pub(crate) const TOPIC_CARD: &str = "/v1.0/card/instances/callback";
const WAIT: Duration = Duration::from_secs(20);

pub(crate) type Socket = WebSocketStream<TcpStream>;

/// The open platform and the Stream gateway's WebSocket listener.
pub(crate) struct FakeDingTalk {
    pub(crate) api: MockServer,
    listener: TcpListener,
}

impl FakeDingTalk {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let api = MockServer::start().await;
        let ok = |result: Value| {
            ResponseTemplate::new(200).set_body_json(json!({ "success": true, "result": result }))
        };
        let answers = [
            (
                "POST",
                OPEN,
                ResponseTemplate::new(200).set_body_json(json!({
                    "endpoint": format!("ws://127.0.0.1:{port}/connect"),
                    "ticket": "ticket-1",
                })),
            ),
            (
                "POST",
                "/v1.0/oauth2/accessToken",
                ResponseTemplate::new(200)
                    .set_body_json(json!({ "accessToken": "tok-1", "expireIn": 7200 })),
            ),
            (
                "POST",
                "/v1.0/card/instances/createAndDeliver",
                ok(json!({ "deliverResults": [{ "success": true, "spaceId": "x" }] })),
            ),
            ("PUT", "/v1.0/card/instances", ok(json!(true))),
            ("PUT", "/v1.0/card/streaming", ok(json!(true))),
            (
                "POST",
                "/v1.0/robot/groupMessages/send",
                ResponseTemplate::new(200).set_body_json(json!({ "processQueryKey": "q1" })),
            ),
            (
                "POST",
                "/v1.0/robot/oToMessages/batchSend",
                ResponseTemplate::new(200)
                    .set_body_json(json!({ "processQueryKey": "q2", "invalidStaffIdList": [] })),
            ),
        ];
        for (verb, route, answer) in answers {
            Mock::given(method(verb))
                .and(path(route))
                .respond_with(answer)
                .mount(&api)
                .await;
        }
        Self { api, listener }
    }

    /// The next Stream connection workmate opens.
    pub(crate) async fn accept(&self) -> Socket {
        let (stream, _) = tokio::time::timeout(WAIT, self.listener.accept())
            .await
            .expect("workmate connects to the Stream gateway")
            .unwrap();
        tokio_tungstenite::accept_async(stream).await.unwrap()
    }

    /// How many times workmate asked `open` for a connection.
    pub(crate) async fn opens(&self) -> usize {
        crate::support::calls(&self.api, OPEN).await.len()
    }
}

/// A downstream frame: `kind` (`CALLBACK`, `EVENT`, `SYSTEM`) on `topic`, carrying `data`.
pub(crate) fn frame(kind: &str, topic: &str, message_id: &str, data: &Value) -> Message {
    Message::text(
        json!({
            "specVersion": "1.0",
            "type": kind,
            "headers": {"appId": "app", "connectionId": "c1", "contentType": "application/json",
                "messageId": message_id, "time": "1700000000000", "topic": topic},
            "data": data.to_string(),
        })
        .to_string(),
    )
}

/// The next text frame workmate writes (WebSocket pings skipped).
pub(crate) async fn next_text(ws: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a frame in time")
            .expect("the socket is open")
            .unwrap();
        if let Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// The `response` of workmate's ack of `message_id`, checking the ack's envelope.
pub(crate) fn acked(ack: &Value, message_id: &str) -> Value {
    assert_eq!(ack["code"], 200, "{ack}");
    assert_eq!(ack["headers"]["messageId"], message_id, "{ack}");
    let data: Value =
        serde_json::from_str(ack["data"].as_str().expect("data is a string")).unwrap();
    data["response"].clone()
}
