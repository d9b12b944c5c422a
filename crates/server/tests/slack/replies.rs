//! Over Slack's wire: configured admins, and a thread reply quoting a reply token.

use super::commands::slash;
use super::*;
use crate::support::eventually_ok;

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
    let item = eventually("the approval parked in the inbox", PATIENCE, || async {
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
    let stored = || async {
        let inbox = app.store.inbox();
        inbox.get(&tenant, &item.id).await.unwrap().unwrap()
    };
    assert_eq!(stored().await.state, InboxItemState::Pending);
    let body = thread_reply("Ev4", "U1", "1700000000.0500", &format!("approve {token}"));
    signed(&app, "events", &body, SECRET).await;
    let resolved = eventually_ok(
        "the owner's reply resolving the item",
        Duration::from_secs(10),
        || async {
            let item = stored().await;
            match item.state {
                InboxItemState::Resolved => Ok(item),
                state => Err(state),
            }
        },
    )
    .await;
    assert_eq!(resolved.resolved_by.unwrap().as_str(), "slack-U1");
    drop(session);
    app.chat.shutdown(Duration::from_secs(2)).await;
}
