//! Two people in one WeCom group (no threads): each has their own conversation with workmate,
//! answered in their own message's stream (which quotes their message); a follow-up continues
//! its sender's conversation; one person writing while the other's approval waits changes
//! nothing for the other; a member cannot approve another's write, and the person who asked can.

use axum::http::StatusCode;
use serde_json::json;
use workmate_protocol::Surface;
use workmate_store::InboxItemState;

use super::{CHAT, CORP, WeComApp, click, parked, wecom_app};
use crate::support::{inbox_state, texts_in, thread_session};

const SCRIPT: &str = r#"{"conversations": [
  {"when": "hello from ana", "turns": [
    {"text": "Hello Ana."},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "EU numbers"}}]},
    {"text": "Written."}]},
  {"when": "hi from bo", "turns": [{"text": "Hi Bo."}]}]}"#;

/// `who` @-mentions workmate with `text` in the group.
fn said(app: &WeComApp, msgid: &str, who: &str, text: &str) -> String {
    json!({
        "msgid": msgid, "aibotid": "bot1", "chatid": CHAT, "chattype": "group",
        "from": {"userid": who}, "response_url": format!("{}/response/{msgid}", app.fake.uri()),
        "msgtype": "text", "text": {"content": format!("@workmate {text}")},
    })
    .to_string()
}

/// Posts `who`'s message; the id of the stream that answers it.
async fn say(app: &WeComApp, msgid: &str, who: &str, text: &str) -> String {
    let (status, reply) = app.post(&said(app, msgid, who, text)).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    reply["stream"]["id"].as_str().unwrap().to_owned()
}

/// The texts `who` sent to their own conversation in the group, once there are `count`.
async fn said_in_conversation_of(app: &WeComApp, who: &str, count: usize) -> Vec<String> {
    let thread = format!("@{who}#0");
    texts_in(&app.store, Surface::Wecom, CORP, CHAT, &thread, count).await
}

#[tokio::test]
async fn two_people_in_one_group_each_have_their_own_conversation() {
    let app = wecom_app(SCRIPT).await;
    let hello = say(&app, "M1", "ana", "hello from ana").await;
    let seen = app.follow(&hello).await;
    let answer = seen.last().unwrap();
    assert!(answer.contains("Hello Ana."), "{answer}");
    assert!(
        answer.contains("👤 ana"),
        "names whose conversation: {answer}"
    );

    // Ana's follow-up continues her conversation, and her write waits for approval.
    let write = say(&app, "M2", "ana", "now write the notes").await;
    let item = parked(&app).await;
    let template = app.card_on(&write).await;
    let task_id = template["task_id"].as_str().unwrap().to_owned();
    let once = super::once_key(&template);

    // Bo writes while it waits: his own conversation answers him in his own stream.
    let hi = say(&app, "M3", "bo", "hi from bo").await;
    assert_ne!(hi, write);
    assert!(app.follow(&hi).await.last().unwrap().contains("Hi Bo."));
    assert_eq!(
        said_in_conversation_of(&app, "ana", 2).await,
        ["hello from ana", "now write the notes"]
    );
    assert_eq!(said_in_conversation_of(&app, "bo", 1).await, ["hi from bo"]);
    let anas = thread_session(&app.store, Surface::Wecom, CORP, CHAT, "@ana#0").await;
    assert_eq!(
        anas.unwrap().owner.as_str(),
        "wecom-ana",
        "her own conversation"
    );

    // Bo (a member) cannot approve Ana's write, and only his own copy of the card says why;
    // Ana can, and her answer reaches her stream.
    let (status, answer) = app.post(&click("C1", "bo", &once, &task_id)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["userids"], json!(["bo"]), "{answer:#}");
    let shown = answer["template_card"].to_string();
    assert!(
        shown.contains("⛔") && shown.contains("(whose conversation this is)"),
        "{answer:#}"
    );
    assert!(!shown.contains("wecom-"), "names, not ids: {answer:#}");
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    assert_eq!(
        inbox_state(&app.store, &tenant, &item.id).await,
        InboxItemState::Pending
    );
    let (status, answer) = app.post(&click("C2", "ana", &once, &task_id)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(answer.to_string().contains("Approved by ana"), "{answer:#}");
    assert_eq!(
        inbox_state(&app.store, &tenant, &item.id).await,
        InboxItemState::Resolved
    );
    let seen = app.follow(&write).await;
    assert!(seen.last().unwrap().contains("Written."), "{seen:#?}");
}

/// A shared group: Ana's write waits for approval, Bo adds something while it waits.
const SHARED: &str = r#"{"conversations": [
  {"when": "write the notes", "turns": [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "EU numbers"}}]},
    {"text": "Written, EU numbers included."}]}]}"#;

#[tokio::test]
async fn in_a_shared_group_an_answer_goes_to_the_message_that_asked_for_it() {
    let app = wecom_app(SHARED).await;
    let (status, _) = app
        .post(&said(
            &app,
            "M0",
            "boss",
            "/workmate settings conversations shared",
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    let tenant = workmate_chat::tenant_of(Surface::Wecom, CORP);
    crate::support::eventually(
        "the group's session becoming shared",
        crate::support::PATIENCE,
        || async {
            let group = thread_session(&app.store, Surface::Wecom, CORP, CHAT, "").await?;
            group.shared.then_some(())
        },
    )
    .await;

    let write = say(&app, "M1", "ana", "write the notes").await;
    let item = parked(&app).await;
    let template = app.card_on(&write).await;
    let task_id = template["task_id"].as_str().unwrap().to_owned();
    let once = super::once_key(&template);

    // Bo writes while Ana's approval waits: his message joins the conversation, and his own
    // reply says where the answer goes instead of staying empty.
    let added = say(&app, "M2", "bo", "also add the EU numbers").await;
    let seen = app.follow(&added).await;
    assert!(
        seen.last()
            .unwrap()
            .contains("Added to the answer in progress"),
        "{seen:#?}"
    );

    // Ana approves: her answer arrives in the reply to her own message.
    let (status, _) = app.post(&click("C1", "ana", &once, &task_id)).await;
    assert_eq!(status, StatusCode::OK);
    let seen = app.follow(&write).await;
    assert!(
        seen.last()
            .unwrap()
            .contains("Written, EU numbers included."),
        "{seen:#?}"
    );
    assert_eq!(
        inbox_state(&app.store, &tenant, &item.id).await,
        InboxItemState::Resolved
    );
}
