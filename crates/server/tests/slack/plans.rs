//! Plan mode over Slack's wire: the plan card posted in the thread, its "Approve in auto mode"
//! button clicked by an admin, and the write that follows running without a prompt.

use workmate_protocol::{PermissionMode, Resolution};

use super::*;

const PLANNER: &str = r###"{"conversations": [{"when": "*", "turns": [
    {"text": "Sure: switch me to plan mode and ask again."},
    {"tool_calls": [{"name": "propose_plan", "arguments": {"plan": "## Add notes\n1. Write notes.md"}}]},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "hello"}}]},
    {"text": "Done."}]}]}"###;

/// The value of the first posted button whose action answers a plan with `mode`.
fn plan_button(posts: &[Value], mode: PermissionMode) -> Option<String> {
    posts.iter().flat_map(button_values).find(|value| {
        matches!(
            workmate_slack::blocks::decode_button_value(value),
            Ok(ButtonAction::Resolve {
                resolution: Resolution::Plan { approved: true, mode: Some(m), .. },
                ..
            }) if m == mode
        )
    })
}

#[tokio::test]
async fn a_plan_approved_into_auto_mode_on_its_card_runs_the_write_unasked() {
    let app = slack_app_admins(PLANNER, &["U1"]).await;
    signed(&app, "events", &mention("Ev1"), SECRET).await;
    let session = app.session_of(THREAD).await;
    let tenant = tenant_of("T1");
    wait_shown(&app.fake, "the first answer", |updates| {
        updates
            .iter()
            .any(|u| u.to_string().contains("plan mode and ask"))
    })
    .await;
    let command = in_thread(
        "Ev2",
        "1700000000.0200",
        "app_mention",
        "<@UBOT> /workmate mode plan",
    );
    signed(&app, "events", &command, SECRET).await;
    eventually("the session's new plan state", PATIENCE, || async {
        let record = app
            .store
            .sessions()
            .get(&tenant, &session.id)
            .await
            .unwrap();
        (record?.mode == PermissionMode::Plan).then_some(())
    })
    .await;
    let ask = in_thread("Ev3", "1700000000.0300", "app_mention", "<@UBOT> go on");
    signed(&app, "events", &ask, SECRET).await;
    let posts = wait_for(&app.fake, "chat.postMessage", "the plan card", |posts| {
        plan_button(posts, PermissionMode::Auto).is_some()
    })
    .await;
    let plan = posts
        .iter()
        .find(|p| plan_button(std::slice::from_ref(p), PermissionMode::Auto).is_some())
        .unwrap();
    assert!(plan.to_string().contains("Write notes.md"), "{plan:#}");
    let auto = plan_button(&posts, PermissionMode::Auto).unwrap();
    let (status, _) = signed(&app, "interactions", &click("U1", &auto), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    wait_for(&app.fake, "chat.update", "the approved plan", |updates| {
        updates.iter().any(|u| u.to_string().contains("auto mode"))
            && updates.iter().any(|u| u.to_string().contains("Done."))
    })
    .await;
    let record = app
        .store
        .sessions()
        .get(&tenant, &session.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.mode, PermissionMode::Auto);
    // The write ran without a prompt: the plan was the only item parked.
    let filter = workmate_store::InboxFilter {
        session: Some(session.id.clone()),
        ..workmate_store::InboxFilter::default()
    };
    let items = app.store.inbox().list(&tenant, &filter, 10).await.unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].kind, workmate_protocol::InboxItemKind::Plan);
    app.chat.shutdown(Duration::from_secs(2)).await;
}
