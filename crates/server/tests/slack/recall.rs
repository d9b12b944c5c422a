//! Deleting a message on Slack (`message_deleted`) before workmate ran it: it never runs, and
//! the thread is told.

use super::*;

/// Slack's `message_deleted` event for the message at `ts` in C1.
fn deleted(event_id: &str, ts: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_001,
        "event": {"type": "message", "subtype": "message_deleted", "hidden": true,
                  "channel": "C1", "ts": "1700000001.0000", "deleted_ts": ts,
                  "event_ts": "1700000001.0000",
                  "previous_message": {"type": "message", "user": "U1", "ts": ts,
                                       "text": "<@UBOT> say hi"}}
    })
    .to_string()
}

#[tokio::test]
async fn a_message_deleted_while_it_waits_in_the_intake_never_runs() {
    let app = slack_app_unstarted(
        r#"{"conversations": [{"when": "*", "turns": [{"text": "Hi."}]}]}"#,
        &[],
    )
    .await;
    // Stored; no worker runs yet.
    let (status, _) = signed(&app, "events", &mention("EvWaiting"), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = signed(&app, "events", &deleted("EvDeleted", THREAD), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    app.chat.start();
    wait_for(&app.fake, "chat.postMessage", "the notice", |posts| {
        posts
            .iter()
            .any(|p| p.to_string().contains("dropped before it ran"))
    })
    .await;
    // Give a worker every chance to run it: it does not.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        thread_session(&app.store, Surface::Slack, "T1", "C1", THREAD)
            .await
            .is_none(),
        "no conversation was started"
    );
    let key = workmate_store::IntakeKey {
        tenant_id: tenant_of("T1"),
        platform: "slack".into(),
        delivery_id: "EvWaiting".into(),
    };
    assert!(app.store.intake().is_withdrawn(&key).await.unwrap());
}
