//! An automation run in a Slack thread: its approval card is clicked by an approver, and its
//! result card lands in the thread.

use std::sync::Arc;
use std::time::Duration;

use super::tenant_of;
use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_engine::automations::{AutomationDraft, create};
use workmate_engine::{Scheduler, SchedulerConfig};
use workmate_protocol::UserId;
use workmate_store::{NewUser, Role, RunStatus, RunTrigger};

use super::{SECRET, THREAD, button_values, click, signed, slack_app, wait_for};
use crate::support::eventually_ok;

#[tokio::test]
async fn a_scheduled_run_asks_in_its_thread_and_posts_its_result_there() {
    let app = slack_app().await;
    let tenant = tenant_of("T1");
    app.store.tenants().ensure(&tenant, "T1").await.unwrap();
    for (id, role) in [("slack-U1", Role::Member), ("slack-U3", Role::Approver)] {
        let user = NewUser {
            id: id.into(),
            display_name: id.into(),
            email: None,
            role,
            sso_subject: None,
        };
        app.store
            .tenants()
            .upsert_user(&tenant, &user)
            .await
            .unwrap();
    }
    let draft: AutomationDraft = serde_json::from_value(json!({
        "title": "Nightly check",
        "instructions": "Say hi on the build box.",
        "cron": "0 2 * * *",
        "timezone": "Asia/Shanghai",
        "target": {"surface": "slack", "chat_id": "C1", "thread_id": THREAD}
    }))
    .unwrap();
    let owner = UserId::from("slack-U1");
    let mut automation = create(&app.store, &tenant, &owner, None, draft, "test")
        .await
        .unwrap();
    // Due now.
    automation.next_run_ms = Some(app.store.clock_ms() - 1);
    app.store.automations().update(&automation).await.unwrap();

    let scheduler = Scheduler::new(
        app.hub.clone(),
        Arc::new(app.chat.clone()),
        SchedulerConfig::default(),
    );
    assert_eq!(scheduler.tick(RunTrigger::Schedule).await.unwrap().fired, 1);

    let posts = wait_for(
        &app.fake,
        "chat.postMessage",
        "the run's approval card",
        |p| {
            p.iter()
                .any(|b| button_values(b).iter().any(|v| v.contains("once")))
        },
    )
    .await;
    assert!(
        posts
            .iter()
            .all(|p| p["channel"] == "C1" && p["thread_ts"] == THREAD),
        "every card goes to the automation's thread: {posts:#?}"
    );
    let approval = posts
        .iter()
        .find(|p| button_values(p).iter().any(|v| v.contains("once")))
        .unwrap();
    assert!(approval.to_string().contains("echo hi"), "{approval:#}");
    let once = button_values(approval)
        .into_iter()
        .find(|v| v.contains("once"))
        .expect("a once button");

    // A member who neither owns the automation nor approves is refused; the approver is not.
    let (status, _) = signed(&app, "interactions", &click("U2", &once), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    wait_for(&app.fake, "chat.postEphemeral", "refusal", |e| {
        !e.is_empty()
    })
    .await;
    let (status, _) = signed(&app, "interactions", &click("U3", &once), SECRET).await;
    assert_eq!(status, StatusCode::OK);

    let posts = wait_for(&app.fake, "chat.postMessage", "the result card", |p| {
        p.iter().any(|b| b.to_string().contains("⏰ Nightly check"))
    })
    .await;
    let result = posts
        .iter()
        .find(|b| b.to_string().contains("⏰ Nightly check"))
        .unwrap();
    assert_eq!(
        (&result["channel"], &result["thread_ts"]),
        (&Value::from("C1"), &Value::from(THREAD))
    );
    let text = result.to_string();
    assert!(
        text.contains("✅ Done") && text.contains("Done."),
        "{result:#}"
    );

    eventually_ok("the run's end", Duration::from_secs(10), || async {
        match scheduler.running() {
            0 => Ok(()),
            running => Err(running),
        }
    })
    .await;
    let runs = app
        .store
        .automations()
        .runs(&tenant, &automation.id, 10)
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Ok);
    let item = app
        .store
        .inbox()
        .list(&tenant, &workmate_store::InboxFilter::default(), 10)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(item.resolved_by.unwrap().as_str(), "slack-U3");
    app.chat.shutdown(Duration::from_secs(2)).await;
}
