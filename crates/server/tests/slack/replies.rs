//! Over Slack's wire: configured admins, and a thread reply quoting a reply token.

use super::commands::slash;
use super::*;

#[tokio::test]
async fn a_configured_admin_is_an_admin_at_first_sight() {
    let app = slack_app_admins(SCRIPT, &["U1"]).await;
    let text = slash(&app, "U1", "whoami").await;
    assert!(text.contains("admin in tenant slack-T1"), "{text}");
    let text = slash(&app, "U2", "whoami").await;
    assert!(text.contains("member in tenant slack-T1"), "{text}");
}

/// A channel message in `THREAD` that does not mention the bot.
fn thread_reply(event_id: &str, user: &str, ts: &str, text: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": "message", "channel_type": "channel", "user": user, "text": text,
                  "ts": ts, "thread_ts": THREAD, "channel": "C1", "event_ts": ts}
    })
    .to_string()
}

#[tokio::test]
async fn a_thread_reply_with_the_token_answers_through_the_same_checks() {
    let app = slack_app().await;
    signed(&app, "events", &mention("Ev1"), SECRET).await;
    let session = app.session_of(THREAD).await;
    let tenant = tenant_of("T1");
    let item = eventually(|| async {
        let filter = workmate_store::InboxFilter::default();
        let items = app.store.inbox().list(&tenant, &filter, 10).await.unwrap();
        items.into_iter().next()
    })
    .await;
    let token = workmate_engine::reply_token(&item.id);
    // Chatter without a token is ignored; a stranger's token reply is refused, privately.
    let body = thread_reply("Ev2", "U2", "1700000000.0300", "looks fine to me");
    assert_eq!(
        signed(&app, "events", &body, SECRET).await.0,
        StatusCode::OK
    );
    let body = thread_reply("Ev3", "U2", "1700000000.0400", &format!("approve {token}"));
    assert_eq!(
        signed(&app, "events", &body, SECRET).await.0,
        StatusCode::OK
    );
    wait_for(
        &app.fake,
        "chat.postEphemeral",
        "the stranger's refusal",
        |e| e.iter().any(|b| b["user"] == "U2"),
    )
    .await;
    let pending = app
        .store
        .inbox()
        .get(&tenant, &item.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pending.state, InboxItemState::Pending);
    let body = thread_reply("Ev4", "U1", "1700000000.0500", &format!("approve {token}"));
    signed(&app, "events", &body, SECRET).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let item = app
            .store
            .inbox()
            .get(&tenant, &item.id)
            .await
            .unwrap()
            .unwrap();
        if item.state == InboxItemState::Resolved {
            assert_eq!(item.resolved_by.unwrap().as_str(), "slack-U1");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the owner's reply did not resolve the item"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(session);
    app.chat.shutdown(Duration::from_secs(2)).await;
}
