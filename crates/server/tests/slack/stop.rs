//! Stopping a streaming turn from Slack: `@workmate /workmate stop` in its thread, and the Stop
//! button on its turn card.

use super::*;

const SLOW: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty", "chunk_delay_ms": 300}]}]}"#;

async fn streaming() -> (SlackApp, workmate_store::SessionRecord) {
    let app = slack_app_with(SLOW).await;
    signed(&app, "events", &mention("Ev1"), SECRET).await;
    let session = app.session_of(THREAD).await;
    // Running, and its turn_start stored (the card's Stop button names that turn).
    eventually(
        "the turn running with its turn_start stored",
        PATIENCE,
        || async {
            let running = app.hub.is_running(&tenant_of("T1"), &session.id).await;
            let tenant = tenant_of("T1");
            let events = app
                .store
                .events()
                .list_after(&tenant, &session.id, 0, 100)
                .await;
            let started = events
                .unwrap()
                .iter()
                .any(|e| matches!(e.kind, workmate_protocol::EventKind::TurnStart { .. }));
            (running.unwrap() && started).then_some(())
        },
    )
    .await;
    (app, session)
}

async fn interrupted(app: &SlackApp, session: &workmate_store::SessionRecord) {
    eventually("the turn's interruption", PATIENCE, || async {
        let tenant = tenant_of("T1");
        let events = app
            .store
            .events()
            .list_after(&tenant, &session.id, 0, 1000)
            .await;
        let events = events.unwrap();
        events
            .iter()
            .any(|e| matches!(e.kind, workmate_protocol::EventKind::Interrupted { .. }))
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn workmate_stop_in_the_thread_stops_a_streaming_turn() {
    let (app, session) = streaming().await;
    let stop = json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": "Ev2", "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> /workmate stop",
                  "ts": "1700000000.0100", "thread_ts": THREAD, "channel": "C1",
                  "event_ts": "1700000000.0100"}
    });
    let (status, _) = signed(&app, "events", &stop.to_string(), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    interrupted(&app, &session).await;
}

#[tokio::test]
async fn the_stop_button_stops_a_streaming_turn() {
    let (app, session) = streaming().await;
    let posts = wait_for(&app.fake, "chat.postMessage", "the turn card", |p| {
        p.iter()
            .any(|b| button_values(b).iter().any(|v| v.contains("stop")))
    })
    .await;
    let stop = posts
        .iter()
        .flat_map(button_values)
        .find(|v| v.contains("stop"))
        .unwrap();
    let (status, _) = signed(&app, "interactions", &click("U1", &stop), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    interrupted(&app, &session).await;
}

#[tokio::test]
async fn the_slash_command_in_a_channel_lists_running_turns_with_stop_buttons() {
    let (app, session) = streaming().await;
    let body = super::commands::slash_body_with("U1", "stop", "stop-list.1.t");
    let (status, reply) = signed(&app, "commands", &body, SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["response_type"], "ephemeral", "{reply:#}");
    let stop = button_values(&reply)
        .into_iter()
        .find(|v| v.contains("stop"))
        .unwrap_or_else(|| panic!("a Stop button: {reply:#}"));
    assert!(stop.contains(session.id.as_str()), "{stop}");
    let (status, _) = signed(&app, "interactions", &click("U1", &stop), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    interrupted(&app, &session).await;
}
