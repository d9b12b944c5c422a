//! Two people in one DingTalk group (which has no threads): each has their own conversation
//! with workmate, answers @-mention and name the person they answer, a follow-up continues its sender's
//! conversation, and one person cannot approve the other's write while the person who asked can.

use futures_util::SinkExt;
use serde_json::{Value, json};
use workmate_protocol::Surface;
use workmate_store::InboxItemState;

use super::fake::{Socket, TOPIC_CARD, TOPIC_ROBOT, acked, frame, next_text};
use super::{CORP, DingTalkApp, GROUP, click, dingtalk_app, item_state, parked, robot_message};
use crate::support::{
    approver_on, calls, separation_of_duties, texts_in, thread_session, wait_for,
};

/// Ana's first message opens a conversation whose next turn writes a file; Bo's is answered.
const SCRIPT: &str = r#"{"conversations": [
  {"when": "hello from ana", "turns": [
    {"text": "Hello Ana."},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "EU numbers"}}]},
    {"text": "Written."}]},
  {"when": "hi from bo", "turns": [{"text": "Hi Bo."}]}]}"#;

/// Delivers `body` over the Stream connection as frame `id`; what its ack answers.
async fn deliver(ws: &mut Socket, id: &str, topic: &str, body: &Value) -> Value {
    ws.send(frame("CALLBACK", topic, id, body)).await.unwrap();
    acked(&next_text(ws).await, id)
}

/// `who`'s message `text` in the group.
fn said(msg_id: &str, who: &str, nick: &str, text: &str) -> Value {
    let mut message = robot_message(msg_id, text);
    message["senderStaffId"] = who.into();
    message["senderNick"] = nick.into();
    message
}

/// The user messages of `who`'s own conversation in the group, once it has `count`.
async fn said_in_conversation_of(app: &DingTalkApp, who: &str, count: usize) -> Vec<String> {
    let thread = format!("@{who}#0");
    texts_in(&app.store, Surface::Dingtalk, CORP, GROUP, &thread, count).await
}

/// The answer card whose content holds `text`: its create call's body.
async fn answer_card(app: &DingTalkApp, text: &str) -> Value {
    let created = wait_for(&app.fake.api, "/v1.0/card/", "the answer card", |calls| {
        calls.iter().any(|c| c.body.to_string().contains(text))
    })
    .await;
    let track = created
        .iter()
        .find(|c| c.body.to_string().contains(text))
        .map(|c| c.body["outTrackId"].clone())
        .unwrap();
    calls(&app.fake.api, "/v1.0/card/instances/createAndDeliver")
        .await
        .into_iter()
        .find(|c| c.body["outTrackId"] == track)
        .map(|c| c.body)
        .unwrap()
}

#[tokio::test]
async fn two_people_in_one_group_each_have_their_own_conversation() {
    let app = dingtalk_app(SCRIPT, |c| c).await;
    let mut ws = app.fake.accept().await;

    deliver(
        &mut ws,
        "f-1",
        TOPIC_ROBOT,
        &said("m-1", "ana", "Ana", "hello from ana"),
    )
    .await;
    deliver(
        &mut ws,
        "f-2",
        TOPIC_ROBOT,
        &said("m-2", "bo", "Bo", "hi from bo"),
    )
    .await;
    // Each is answered in their own conversation, and the answer @-mentions them.
    let to_ana = answer_card(&app, "Hello Ana.").await;
    assert_eq!(
        to_ana["imGroupOpenDeliverModel"]["atUserIds"],
        json!({"ana": "ana"}),
        "{to_ana:#}"
    );
    let to_bo = answer_card(&app, "Hi Bo.").await;
    assert_eq!(
        to_bo["imGroupOpenDeliverModel"]["atUserIds"],
        json!({"bo": "bo"}),
        "{to_bo:#}"
    );
    // Each card names whose conversation it belongs to.
    assert!(to_ana.to_string().contains("👤 Ana · "), "{to_ana:#}");
    assert!(to_bo.to_string().contains("👤 Bo · "), "{to_bo:#}");

    // Ana's follow-up continues her conversation: it holds her two messages, not Bo's.
    deliver(
        &mut ws,
        "f-3",
        TOPIC_ROBOT,
        &said("m-3", "ana", "Ana", "now write the notes"),
    )
    .await;
    assert_eq!(
        said_in_conversation_of(&app, "ana", 2).await,
        ["hello from ana", "now write the notes"]
    );
    assert_eq!(said_in_conversation_of(&app, "bo", 1).await, ["hi from bo"]);
    let anas = thread_session(&app.store, Surface::Dingtalk, CORP, GROUP, "@ana#0").await;
    assert_eq!(
        anas.unwrap().owner.as_str(),
        "dingtalk-ana",
        "her own conversation"
    );

    // Her write waits for approval: Bo (a member) cannot approve it, Ana can.
    let item = parked(&app).await;
    let out_track_id = format!("approval_{}", item.id.as_str());
    wait_for(
        &app.fake.api,
        "/v1.0/card/instances/createAndDeliver",
        "the approval card",
        |calls| calls.iter().any(|c| c.body["outTrackId"] == out_track_id),
    )
    .await;
    let refused = deliver(
        &mut ws,
        "c-1",
        TOPIC_CARD,
        &click(&out_track_id, "bo", "once"),
    )
    .await;
    // DingTalk applies a callback's answer to the clicker's view only: Bo sees why.
    let params = &refused["cardData"]["cardParamMap"];
    let detail = params["detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with("**⛔ Only Ana (whose conversation this is)"),
        "{refused:#}"
    );
    assert!(params.get("status").is_none(), "{refused:#}");
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);
    let approved = deliver(
        &mut ws,
        "c-2",
        TOPIC_CARD,
        &click(&out_track_id, "ana", "once"),
    )
    .await;
    assert_eq!(
        approved["cardData"]["cardParamMap"]["status"], "approved",
        "{approved:#}"
    );
    answer_card(&app, "Written.").await;
    app.surface.shutdown().await;
}

#[tokio::test]
async fn an_approver_gets_a_copy_in_their_chat_with_the_robot_and_both_cards_show_the_answer() {
    let app = dingtalk_app(super::SHELL, |c| c).await;
    let tenant = workmate_chat::tenant_of(Surface::Dingtalk, CORP);
    separation_of_duties(&app.store, &tenant).await;
    approver_on(&app.store, &tenant, "dingtalk", "carol", "Carol").await;
    let mut ws = app.fake.accept().await;
    deliver(
        &mut ws,
        "f-1",
        TOPIC_ROBOT,
        &said("m-1", "ana", "Ana", "run it"),
    )
    .await;
    let item = parked(&app).await;
    // Ana may not approve her own command here (separation of duties): Carol is told, in her
    // own chat with the robot, with a card of its own.
    let created = wait_for(
        &app.fake.api,
        "/v1.0/card/instances/createAndDeliver",
        "the approver's copy",
        |calls| {
            calls
                .iter()
                .any(|c| c.body["openSpaceId"] == "dtv1.card//IM_ROBOT.carol")
        },
    )
    .await;
    let copy = created
        .iter()
        .find(|c| c.body["openSpaceId"] == "dtv1.card//IM_ROBOT.carol")
        .unwrap();
    let copy_id = copy.body["outTrackId"].as_str().unwrap().to_owned();
    let group_id = format!("approval_{}", item.id.as_str());
    assert_ne!(copy_id, group_id, "a card of its own");
    assert_eq!(copy.body["cardData"]["cardParamMap"]["status"], "pending");

    let refused = deliver(&mut ws, "c-1", TOPIC_CARD, &click(&group_id, "ana", "once")).await;
    let detail = refused["cardData"]["cardParamMap"]["detail"].to_string();
    assert!(detail.contains("⛔ Separation of duties"), "{refused:#}");
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);
    let approved = deliver(
        &mut ws,
        "c-2",
        TOPIC_CARD,
        &click(&copy_id, "carol", "once"),
    )
    .await;
    assert_eq!(
        approved["cardData"]["cardParamMap"]["status"], "approved",
        "{approved:#}"
    );
    // Both cards now say it was approved, for everyone who sees them.
    for track in [&group_id, &copy_id] {
        wait_for(
            &app.fake.api,
            "/v1.0/card/instances",
            "the card updated",
            |calls| {
                calls.iter().any(|c| {
                    c.method == "PUT"
                        && c.body["outTrackId"] == *track
                        && c.body["cardData"]["cardParamMap"]["status"] == "approved"
                })
            },
        )
        .await;
    }
    app.surface.shutdown().await;
}
