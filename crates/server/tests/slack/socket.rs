//! Socket Mode: the same processing over a WebSocket, acks by envelope id.

use super::*;

/// Socket Mode end to end: a fake Slack hands out a `ws://` URL to a raw WebSocket server that
/// sends an app_mention and a slash command; the turn card goes out through the fake Web API.
#[tokio::test]
async fn socket_mode_turns_a_mention_into_a_turn_card_and_answers_commands_in_the_ack() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let ok = |extra: Value| {
        let mut body = json!({"ok": true});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        ResponseTemplate::new(200).set_body_json(body)
    };
    let fake = MockServer::start().await;
    for (api, extra) in [
        (
            "/chat.postMessage",
            json!({"channel": "C1", "ts": "1700000000.0001"}),
        ),
        (
            "/chat.update",
            json!({"channel": "C1", "ts": "1700000000.0001"}),
        ),
        (
            "/auth.test",
            json!({"team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"}),
        ),
        (
            "/apps.connections.open",
            json!({"url": format!("ws://127.0.0.1:{port}/link/?ticket=t")}),
        ),
    ] {
        Mock::given(method("POST"))
            .and(path(api))
            .respond_with(ok(extra))
            .mount(&fake)
            .await;
    }
    let app = app_with_script(SCRIPT).await;
    let config = SlackConfig::socket("xapp-test".into(), "xoxb-test".into(), &fake.uri());
    let slack = SlackSurface::new(&config, &app.state.chat).unwrap();
    app.state.chat.start();

    let (stream, _) = tokio::time::timeout(Duration::from_secs(10), listener.accept())
        .await
        .unwrap()
        .unwrap();
    let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
    let next_text = async |ws: &mut tokio_tungstenite::WebSocketStream<_>| loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Text(text) = frame {
            return serde_json::from_str::<Value>(text.as_str()).unwrap();
        }
    };
    let envelope = |kind: &str, id: &str, payload: Value, respond: bool| {
        Message::text(
            json!({"type": kind, "envelope_id": id, "payload": payload,
                   "accepts_response_payload": respond})
            .to_string(),
        )
    };
    ws.send(Message::text(json!({"type": "hello"}).to_string()))
        .await
        .unwrap();
    let event: Value = serde_json::from_str(&mention("EvS1")).unwrap();
    ws.send(envelope("events_api", "env-1", event, false))
        .await
        .unwrap();
    assert_eq!(next_text(&mut ws).await, json!({"envelope_id": "env-1"}));
    let posts = wait_for(&fake, "chat.postMessage", "the turn card", |p| {
        !p.is_empty()
    })
    .await;
    assert_eq!(posts[0]["channel"], "C1");
    assert_eq!(posts[0]["thread_ts"], THREAD);

    let command = json!({
        "team_id": "T1", "team_domain": "acme", "channel_id": "C1", "channel_name": "general",
        "user_id": "U1", "user_name": "ana", "command": "/workmate", "text": "whoami",
        "api_app_id": "A1", "response_url": "https://hooks.slack.invalid/c", "trigger_id": "t"
    });
    ws.send(envelope("slash_commands", "env-2", command, true))
        .await
        .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack["envelope_id"], "env-2");
    assert_eq!(ack["payload"]["response_type"], "ephemeral");
    assert!(
        ack["payload"]["text"]
            .as_str()
            .unwrap()
            .contains("You are slack-U1"),
        "{ack}"
    );

    slack.shutdown().await;
    app.state.chat.shutdown(Duration::from_secs(1)).await;
    let closed = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap();
    assert!(matches!(
        closed,
        None | Some(Ok(Message::Close(_))) | Some(Err(_))
    ));
    drop(app);
}
