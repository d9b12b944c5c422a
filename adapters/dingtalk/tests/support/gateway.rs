//! A fake DingTalk Stream gateway: `open` (wiremock) hands out a `ws://` endpoint of a raw
//! tokio-tungstenite server, which the tests drive frame by frame.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_dingtalk::stream::Timings;

pub(crate) const CLIENT_ID: &str = "ding-app-key";
pub(crate) const CLIENT_SECRET: &str = "ding-app-secret";
pub(crate) const TICKET: &str = "ticket+1/=";
pub(crate) const WAIT: Duration = Duration::from_secs(5);

pub(crate) use workmate_test_support::eventually_holds;

pub(crate) type Socket = WebSocketStream<TcpStream>;

/// `open` plus the WebSocket listener it points at.
pub(crate) struct FakeDingTalk {
    pub(crate) api: MockServer,
    pub(crate) listener: TcpListener,
}

impl FakeDingTalk {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let api = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1.0/gateway/connections/open"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "endpoint": format!("ws://127.0.0.1:{port}/connect"),
                "ticket": TICKET,
            })))
            .mount(&api)
            .await;
        Self { api, listener }
    }

    /// The next connection, and the path and query it was opened with.
    #[allow(
        clippy::result_large_err,
        reason = "tungstenite's handshake callback has this error type"
    )]
    pub(crate) async fn accept(&self) -> (Socket, String) {
        let (stream, _) = tokio::time::timeout(WAIT, self.listener.accept())
            .await
            .expect("the client connects")
            .unwrap();
        let uri = Arc::new(Mutex::new(String::new()));
        let seen = Arc::clone(&uri);
        let callback = move |request: &Request, response: Response| {
            *seen.lock().unwrap() = request.uri().to_string();
            Ok(response)
        };
        let ws = tokio_tungstenite::accept_hdr_async(stream, callback)
            .await
            .unwrap();
        let uri = uri.lock().unwrap().clone();
        (ws, uri)
    }

    pub(crate) async fn opens(&self) -> usize {
        self.api.received_requests().await.unwrap().len()
    }
}
pub(crate) fn timings() -> Timings {
    Timings {
        ping_every: Duration::from_secs(3600),
        connect_timeout: WAIT,
        backoff_first: Duration::from_millis(10),
        backoff_max: Duration::from_millis(50),
        drain: Duration::from_millis(500),
    }
}
pub(crate) fn downstream(kind: &str, topic: &str, message_id: &str, data: &Value) -> Message {
    Message::text(
        json!({
            "specVersion": "1.0",
            "type": kind,
            "headers": {"appId": "app", "connectionId": "c1", "contentType": "application/json",
                "messageId": message_id, "time": "1690000000000", "topic": topic},
            "data": data.to_string(),
        })
        .to_string(),
    )
}

/// The next text frame the client sends, skipping WebSocket pings.
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

/// An ack's `data`, parsed.
pub(crate) fn ack_data(ack: &Value, message_id: &str) -> Value {
    assert_eq!(ack["code"], 200, "{ack}");
    assert_eq!(ack["message"], "OK", "{ack}");
    assert_eq!(
        ack["headers"],
        json!({"contentType": "application/json", "messageId": message_id}),
        "{ack}"
    );
    serde_json::from_str(ack["data"].as_str().expect("data is a string")).unwrap()
}
