//! Two people in one Feishu group: a second person who writes in the first person's thread while
//! their approval waits is told privately, by name, whose conversation it is; the first
//! person's approval still finishes their turn in its own card.

use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_protocol::Surface;
use workmate_store::InboxItemState;

use super::{ROOT, SHELL, TENANT_KEY, approve_once, click, feishu_app, mention, parked, post};
use crate::support::{inbox_state, wait_for};

/// A second person writes in Ana's thread while her approval waits: they are told privately,
/// by name, whose conversation it is, and Ana's approval still finishes her turn in its card.
#[tokio::test]
async fn a_second_person_writing_while_an_approval_waits_is_told_privately_by_name() {
    let app = feishu_app(SHELL).await;
    let (status, _) = post(&app, "events", &mention("Ev1", "run it")).await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;

    let mut from_bo: Value = serde_json::from_str(&mention("Ev2", "also the EU numbers")).unwrap();
    from_bo["event"]["sender"]["sender_id"] =
        json!({"open_id": "ou_bo", "union_id": "on_bo", "user_id": "bo"});
    from_bo["event"]["message"]["message_id"] = json!("om_from_bo");
    from_bo["event"]["message"]["root_id"] = json!(ROOT);
    let (status, _) = post(&app, "events", &from_bo.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let told = wait_for(&app.fake, "/open-apis/im/v1/messages", "Bo told", |calls| {
        calls
            .iter()
            .any(|c| c.body.to_string().contains("who started it"))
    })
    .await;
    let told = told
        .iter()
        .find(|c| c.body.to_string().contains("who started it"))
        .unwrap();
    assert_eq!(told.body["receive_id"], "ou_bo", "{told:#?}");
    assert!(
        !told.body.to_string().contains("feishu-ou_"),
        "names, not ids: {told:#?}"
    );

    // Ana approves; her turn finishes in its own card.
    let tenant = workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY);
    let once = approve_once(&app, &item).await;
    let (_, answer) = post(&app, "card", &click("Cb1", "ou_ana", &once)).await;
    assert_eq!(answer["toast"]["type"], "success", "{answer:#}");
    wait_for(
        &app.fake,
        "/open-apis/cardkit/v1/cards/",
        "the answer",
        |calls| calls.iter().any(|c| c.body.to_string().contains("Done.")),
    )
    .await;
    assert_eq!(
        inbox_state(&app.store, &tenant, &item.id).await,
        InboxItemState::Resolved
    );
}
