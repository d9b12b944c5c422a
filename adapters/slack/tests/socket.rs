//! Socket Mode against a fake Slack: `apps.connections.open` (wiremock) hands out `ws://` URLs
//! of a raw tokio-tungstenite server that says hello, sends envelopes, checks the acks, asks for a
//! refresh and drops a connection.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_slack::{
    Backoff, Event, EventEnvelope, Handled, Interaction, SocketHandler, SocketInbound, SocketMode,
};

const APP_TOKEN: &str = "xapp-1-test";
const WAIT: Duration = Duration::from_secs(5);

/// Forwards what arrives; answers slash commands with a message; cannot take event `EvFull`
/// (as when the delivery could not be stored).
struct Collect(mpsc::UnboundedSender<SocketInbound>);

impl SocketHandler for Collect {
    async fn handle(&self, inbound: SocketInbound) -> Handled {
        let reply = match &inbound {
            SocketInbound::SlashCommand(command) => Handled::Ack(Some(
                json!({"response_type": "ephemeral", "text": format!("you said {}", command.text)}),
            )),
            SocketInbound::Event(envelope) => match envelope.as_ref() {
                EventEnvelope::EventCallback(callback)
                    if callback.event_id.as_deref() == Some("EvFull") =>
                {
                    return Handled::Retry;
                }
                _ => Handled::Ack(None),
            },
            _ => Handled::Ack(None),
        };
        self.0.send(inbound).unwrap();
        reply
    }
}

/// An `events_api` envelope of an app mention.
fn mention_envelope(envelope_id: &str, event_id: &str) -> Value {
    json!({
        "type": "events_api", "envelope_id": envelope_id, "accepts_response_payload": false,
        "retry_attempt": 0, "retry_reason": "",
        "payload": {
            "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
            "event_id": event_id, "event_time": 1_700_000_000,
            "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> hi",
                      "ts": "1700000000.000100", "channel": "C1", "event_ts": "1700000000.000100"}
        }
    })
}

type Server = WebSocketStream<TcpStream>;

async fn accept(listener: &TcpListener) -> Server {
    let (stream, _) = tokio::time::timeout(WAIT, listener.accept())
        .await
        .expect("the client connects")
        .unwrap();
    tokio_tungstenite::accept_async(stream).await.unwrap()
}

async fn send(ws: &mut Server, frame: Value) {
    ws.send(Message::text(frame.to_string())).await.unwrap();
}

/// The next text frame, as JSON.
async fn receive(ws: &mut Server) -> Value {
    loop {
        let frame = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a frame in time")
            .expect("the socket is open")
            .unwrap();
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

fn hello() -> Value {
    json!({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}})
}

#[tokio::test]
async fn acks_envelopes_refreshes_on_disconnect_and_reconnects_when_lost() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let api = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/apps.connections.open"))
        .and(header(
            "authorization",
            format!("Bearer {APP_TOKEN}").as_str(),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"ok": true, "url": format!("ws://127.0.0.1:{port}/link/?ticket=t")}),
        ))
        .mount(&api)
        .await;
    let client = SocketMode::new(&format!("{}/api", api.uri()), SecretString::from(APP_TOKEN))
        .unwrap()
        .with_backoff(Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(100),
        });
    let (tx, mut inbound) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(client.run(Arc::new(Collect(tx)), cancel.clone()));

    // First connection: hello, an event acked by its id, then a refresh.
    let mut first = accept(&listener).await;
    send(&mut first, hello()).await;
    send(&mut first, mention_envelope("env-1", "Ev1")).await;
    assert_eq!(receive(&mut first).await, json!({"envelope_id": "env-1"}));
    let got = tokio::time::timeout(WAIT, inbound.recv())
        .await
        .unwrap()
        .unwrap();
    let SocketInbound::Event(envelope) = got else {
        panic!("not an event: {got:?}")
    };
    let EventEnvelope::EventCallback(callback) = *envelope else {
        panic!("not an event callback")
    };
    assert_eq!(callback.event_id.as_deref(), Some("Ev1"));
    assert!(matches!(callback.event, Event::AppMention(_)));
    send(
        &mut first,
        json!({"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "h"}}),
    )
    .await;

    // The new connection comes up before the old one is closed.
    let mut second = accept(&listener).await;
    let closed = tokio::time::timeout(WAIT, first.next()).await.unwrap();
    assert!(matches!(
        closed,
        None | Some(Ok(Message::Close(_))) | Some(Err(_))
    ));
    assert_eq!(api.received_requests().await.unwrap().len(), 2);
    send(&mut second, hello()).await;
    send(
        &mut second,
        json!({
            "type": "interactive", "envelope_id": "env-2", "accepts_response_payload": false,
            "payload": {
                "type": "block_actions", "team": {"id": "T1"}, "user": {"id": "U2"},
                "actions": [{"type": "button", "action_id": "approve", "value": "v", "block_id": "b", "action_ts": "1.2"}],
                "container": {"type": "message", "message_ts": "1.1", "channel_id": "C1"},
                "channel": {"id": "C1"}, "response_url": "https://hooks.slack.com/a", "trigger_id": "t"
            }
        }),
    )
    .await;
    assert_eq!(receive(&mut second).await, json!({"envelope_id": "env-2"}));
    let got = tokio::time::timeout(WAIT, inbound.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(
            &got,
            SocketInbound::Interaction(Interaction::BlockActions(_))
        ),
        "{got:?}"
    );
    // A slash command's ack carries the handler's answer.
    send(
        &mut second,
        json!({
            "type": "slash_commands", "envelope_id": "env-3", "accepts_response_payload": true,
            "payload": {
                "token": "x", "team_id": "T1", "team_domain": "acme", "channel_id": "C1",
                "channel_name": "general", "user_id": "U1", "user_name": "ana",
                "command": "/workmate", "text": "whoami", "api_app_id": "A1",
                "is_enterprise_install": "false",
                "response_url": "https://hooks.slack.com/c", "trigger_id": "t2"
            }
        }),
    )
    .await;
    assert_eq!(
        receive(&mut second).await,
        json!({"envelope_id": "env-3", "payload": {"response_type": "ephemeral", "text": "you said whoami"}})
    );
    assert!(matches!(
        inbound.recv().await,
        Some(SocketInbound::SlashCommand(_))
    ));

    // A dropped connection is reopened (after the backoff) with a fresh URL.
    drop(second);
    let mut third = accept(&listener).await;
    send(&mut third, hello()).await;
    assert_eq!(api.received_requests().await.unwrap().len(), 3);

    // What the handler could not take is left unacked, for Slack to deliver again.
    send(&mut third, mention_envelope("env-4", "EvFull")).await;
    send(&mut third, mention_envelope("env-5", "Ev5")).await;
    assert_eq!(receive(&mut third).await, json!({"envelope_id": "env-5"}));
    let quiet = tokio::time::timeout(Duration::from_millis(300), third.next()).await;
    assert!(quiet.is_err(), "env-4 must not be acked: {quiet:?}");

    cancel.cancel();
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_failing_open_is_retried_and_cancel_stops_the_client() {
    let api = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/apps.connections.open"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": "invalid_auth"})),
        )
        .mount(&api)
        .await;
    let client = SocketMode::new(&format!("{}/api", api.uri()), SecretString::from(APP_TOKEN))
        .unwrap()
        .with_backoff(Backoff {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(40),
        });
    let (tx, _inbound) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(client.run(Arc::new(Collect(tx)), cancel.clone()));
    tokio::time::timeout(WAIT, async {
        while api.received_requests().await.unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("apps.connections.open is retried");
    cancel.cancel();
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
}
