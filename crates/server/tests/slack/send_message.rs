//! `send_message` from an automation: its digest goes to #sales unasked under a standing rule
//! for that exact target; any other target is asked first, and nothing is posted there.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use workmate_engine::automations::{AutomationDraft, create};
use workmate_engine::{Scheduler, SchedulerConfig};
use workmate_protocol::UserId;
use workmate_store::{InboxFilter, InboxItemState, NewUser, Role, RunTrigger};

use super::{THREAD, calls, slack_app_with, tenant_of, wait_for};
use crate::support::eventually_ok;

const DIGEST_SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "send_message", "arguments": {"target": "slack:C0SALES", "text": "Sales digest: 3 deals closed."}}]},
    {"tool_calls": [{"name": "send_message", "arguments": {"target": "slack:C0OTHER", "text": "Sales digest: 3 deals closed."}}]},
    {"text": "Posted."}]}]}"#;

#[tokio::test]
async fn an_automation_posts_to_its_exact_target_and_asks_for_any_other() {
    let app = slack_app_with(DIGEST_SCRIPT).await;
    let tenant = tenant_of("T1");
    app.store.tenants().ensure(&tenant, "T1").await.unwrap();
    let user = NewUser {
        id: "slack-U1".into(),
        display_name: "Ana".into(),
        email: None,
        role: Role::Admin,
        sso_subject: None,
    };
    app.store
        .tenants()
        .upsert_user(&tenant, &user)
        .await
        .unwrap();
    let draft: AutomationDraft = serde_json::from_value(json!({
        "title": "Sales digest",
        "instructions": "Post the sales digest to #sales.",
        "cron": "0 9 * * 1-5",
        "timezone": "Asia/Shanghai",
        "target": {"surface": "slack", "chat_id": "C1", "thread_id": THREAD},
        "permissions": [{"tool": "send_message", "target": "slack:C0SALES", "access": "write"}]
    }))
    .unwrap();
    let mut automation = create(
        &app.store,
        &tenant,
        &UserId::from("slack-U1"),
        None,
        draft,
        "test",
    )
    .await
    .unwrap();
    automation.next_run_ms = Some(app.store.clock_ms() - 1);
    app.store.automations().update(&automation).await.unwrap();
    let scheduler = Scheduler::new(
        app.hub.clone(),
        Arc::new(app.chat.clone()),
        SchedulerConfig::default(),
    );
    assert_eq!(scheduler.tick(RunTrigger::Schedule).await.unwrap().fired, 1);

    // The rule's exact target: posted without asking, saying who it was sent for.
    let posts = wait_for(
        &app.fake,
        "chat.postMessage",
        "the digest in #sales",
        |posts| posts.iter().any(|p| p["channel"] == "C0SALES"),
    )
    .await;
    let digest = posts
        .iter()
        .find(|p| p["channel"] == "C0SALES")
        .unwrap()
        .to_string();
    assert!(digest.contains("Sales digest: 3 deals closed."), "{digest}");
    assert!(
        digest.contains("Sent by workmate for Ana_"),
        "by name: {digest}"
    );

    // Any other target: an approval waits in the inbox, and nothing reaches that channel.
    let item = eventually_ok(
        "an approval for the other target",
        Duration::from_secs(10),
        || async {
            app.store
                .inbox()
                .list(&tenant, &InboxFilter::default(), 10)
                .await
                .unwrap()
                .into_iter()
                .find(|i| i.state == InboxItemState::Pending)
                .ok_or("no pending item")
        },
    )
    .await;
    assert_eq!(item.data["tool"], "send_message");
    assert_eq!(
        item.data["arguments"]["target"], "slack:C0OTHER",
        "{}",
        item.data
    );
    assert!(
        !calls(&app.fake, "chat.postMessage")
            .await
            .iter()
            .any(|p| p["channel"] == "C0OTHER"),
        "nothing was posted to the other channel before an approval"
    );
    let audit = app.store.audit().recent(&tenant, 50).await.unwrap();
    let sent = audit
        .iter()
        .find(|r| r.stage == "tool_finished" && r.tool.as_deref() == Some("send_message"))
        .unwrap_or_else(|| panic!("the post is audited: {audit:#?}"));
    assert_eq!(sent.status.as_deref(), Some("ok"), "{sent:?}");
    assert!(
        sent.detail["standing_rule"] == "send_message → slack:C0SALES",
        "the rule that allowed it is audited: {sent:?}"
    );
    app.chat.shutdown(Duration::from_secs(2)).await;
}
