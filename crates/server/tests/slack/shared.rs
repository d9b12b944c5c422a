//! A Slack thread an admin shared (`/workmate settings conversations shared`, typed in it):
//! everyone in it talks to its conversation, each message stored with its author, and approvals
//! keep their rule: the person who asked or an approver answers, nobody else.

use workmate_protocol::{Message, SessionId, UserId};

use super::*;

/// A message in `THREAD` from `user`, addressing the bot.
fn from(user: &str, event_id: &str, ts: &str, text: &str) -> String {
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "channel_type": "channel", "user": user,
                  "text": format!("<@UBOT> {text}"), "ts": ts, "thread_ts": THREAD,
                  "channel": "C1", "event_ts": ts}
    })
    .to_string()
}

/// U1 starts the thread; the admin shares it; the thread's session.
async fn shared_thread(app: &SlackApp) -> SessionId {
    let (status, _) = signed(app, "events", &mention("Ev0"), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    let session = app.session_of(THREAD).await;
    let share = from(
        "UADMIN",
        "EvShare",
        "1700000000.0050",
        "/workmate settings conversations shared",
    );
    signed(app, "events", &share, SECRET).await;
    let tenant = tenant_of("T1");
    eventually("the session becoming shared", PATIENCE, || async {
        let record = app
            .store
            .sessions()
            .get(&tenant, &session.id)
            .await
            .unwrap()?;
        record.shared.then_some(())
    })
    .await;
    session.id
}

/// The authors of the session's user messages, in order, once there are `count`.
async fn authors(app: &SlackApp, session: &SessionId, count: usize) -> Vec<UserId> {
    let tenant = tenant_of("T1");
    eventually("the messages' authors", PATIENCE, || async {
        let authors: Vec<UserId> = app
            .store
            .messages()
            .list(&tenant, session)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                Message::User { author, .. } => author.map(|a| a.user_id),
                _ => None,
            })
            .collect();
        (authors.len() >= count).then_some(authors)
    })
    .await
}

#[tokio::test]
async fn in_a_shared_thread_ten_people_reach_the_conversation_while_it_answers() {
    let words: Vec<String> = (1..=60).map(|i| format!("w{i}")).collect();
    let mut turns = vec![json!({"text": words.join(" "), "chunk_delay_ms": 10})];
    turns.extend((0..40).map(|_| json!({"text": "Noted."})));
    let script = json!({"conversations": [{"when": "*", "turns": turns}]}).to_string();
    let app = slack_app_admins(&script, &["UADMIN"]).await;
    let session = shared_thread(&app).await;

    let people: Vec<String> = (2..=11).map(|n| format!("U{n}")).collect();
    for (n, person) in people.iter().enumerate() {
        let ts = format!("1700000000.{:04}", 100 + n);
        let said = from(
            person,
            &format!("EvP{n}"),
            &ts,
            &format!("also add region {n}"),
        );
        let (status, _) = signed(&app, "events", &said, SECRET).await;
        assert_eq!(status, StatusCode::OK);
    }
    let authors = authors(&app, &session, 11).await;
    let mut expected: Vec<UserId> = vec![UserId::from("slack-U1")];
    expected.extend(people.iter().map(|p| UserId::from(format!("slack-{p}"))));
    let mut sorted = authors[1..].to_vec();
    sorted.sort();
    let mut others = expected[1..].to_vec();
    others.sort();
    assert_eq!(authors[0], expected[0], "{authors:?}");
    assert_eq!(sorted, others, "every message arrived with its author");
    // Nobody was told to start their own thread.
    let refusals = calls(&app.fake, "chat.postEphemeral").await;
    assert!(
        refusals
            .iter()
            .all(|r| !r.to_string().contains("Start your own thread")),
        "{refusals:#?}"
    );
}

#[tokio::test]
async fn in_a_shared_thread_only_the_asker_or_an_approver_answers_a_prompt() {
    let script = r#"{"conversations": [{"when": "*", "turns": [
        {"text": "Hello."},
        {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]},
        {"text": "Done."}]}]}"#;
    let app = slack_app_admins(script, &["UADMIN"]).await;
    shared_thread(&app).await;
    wait_shown(&app.fake, "the first answer", |updates| {
        updates.iter().any(|u| u.to_string().contains("Hello."))
    })
    .await;
    // U2, a member, asks for a command in U1's thread.
    signed(
        &app,
        "events",
        &from("U2", "EvRun", "1700000000.0200", "run it"),
        SECRET,
    )
    .await;
    let posts = wait_for(&app.fake, "chat.postMessage", "the approval card", |p| {
        p.iter()
            .any(|b| button_values(b).iter().any(|v| v.contains("once")))
    })
    .await;
    let once = posts
        .iter()
        .flat_map(button_values)
        .find(|v| v.contains("once"))
        .unwrap();
    let ButtonAction::Resolve { item_id, .. } =
        workmate_slack::blocks::decode_button_value(&once).unwrap()
    else {
        panic!("the once button resolves the item");
    };
    let tenant = tenant_of("T1");
    let item = app
        .store
        .inbox()
        .get(&tenant, &item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.requested_by, Some(UserId::from("slack-U2")));

    // Another member, and the thread's starter: refused, nothing changes.
    for member in ["U3", "U1"] {
        signed(&app, "interactions", &click(member, &once), SECRET).await;
        wait_for(&app.fake, "chat.postEphemeral", "the refusal", |e| {
            e.iter().any(|r| r["user"] == member)
        })
        .await;
    }
    let item = app
        .store
        .inbox()
        .get(&tenant, &item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.state, InboxItemState::Pending);
    // The person who asked approves.
    signed(&app, "interactions", &click("U2", &once), SECRET).await;
    eventually("the inbox item resolved", PATIENCE, || async {
        let item = app.store.inbox().get(&tenant, &item_id).await.unwrap()?;
        (item.state == InboxItemState::Resolved).then_some(())
    })
    .await;
    let item = app
        .store
        .inbox()
        .get(&tenant, &item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.resolved_by, Some(UserId::from("slack-U2")));
}
