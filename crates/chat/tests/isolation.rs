//! Tenant isolation through chat: a person of another installation (tenant B) tries every chat
//! command, click and reply that names tenant A's items, sessions and automations by id. Each is
//! answered as if the thing did not exist, and nothing of tenant A changes.

use workmate_adapter::{Inbound, InboundKind, ToastKind};
use workmate_cards::ButtonAction;
use workmate_engine::reply_token;
use workmate_protocol::{ApprovalChoice, Resolution, TurnId};
use workmate_store::{InboxFilter, InboxItemState, NewAutomation};

use crate::support::{PATIENCE, SHELL, TestChat, eventually, inbound, message};

/// The same delivery, from tenant B's installation.
fn from_b(mut delivery: Inbound) -> Inbound {
    delivery.tenant_key = "T2".into();
    delivery.user.id = format!("B-{}", delivery.user.id);
    delivery
}

#[tokio::test]
async fn another_tenant_finds_nothing_of_this_one_by_id() {
    let chat = TestChat::new(SHELL).await;
    chat.send(message("A1", "U1", "t1", "run it")).await;
    let item = eventually("tenant A's approval is parked", PATIENCE, || async {
        chat.store
            .inbox()
            .list(&chat.tenant, &InboxFilter::default(), 10)
            .await
            .unwrap()
            .into_iter()
            .next()
    })
    .await;
    let automation = chat
        .store
        .automations()
        .create(
            &chat.tenant,
            &NewAutomation {
                title: "A's digest".into(),
                instructions: "Post it".into(),
                schedule: serde_json::json!({"kind": "cron", "cron": "0 9 * * *", "timezone": "UTC"}),
                owner: "feishu-U1".into(),
                origin_session_id: None,
                enabled: true,
                next_run_ms: Some(4_102_444_800_000),
                settings: serde_json::json!({}),
            },
        )
        .await
        .unwrap();

    // Clicking A's approval button.
    let approve = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    };
    let reply = chat
        .chat
        .click_now(from_b(inbound(
            "B1",
            "U9",
            Some("t1"),
            InboundKind::Click { action: approve },
        )))
        .await
        .unwrap();
    assert_ne!(reply.kind, ToastKind::Success, "{reply:?}");
    assert!(
        reply.card.is_none(),
        "no card of tenant A is shown: {reply:?}"
    );
    // Stopping A's session.
    let stop = ButtonAction::Stop {
        session_id: item.session_id.clone(),
        turn_id: TurnId::from("tn_any"),
    };
    let reply = chat
        .chat
        .click_now(from_b(inbound(
            "B2",
            "U9",
            Some("t1"),
            InboundKind::Click { action: stop },
        )))
        .await
        .unwrap();
    assert!(reply.toast.contains("no longer exists"), "{reply:?}");
    // Replying with A's token.
    let token = reply_token(&item.id);
    chat.send(from_b(message(
        "B3",
        "U9",
        "t1",
        &format!("approve {token}"),
    )))
    .await;
    // Every automation command with A's automation id.
    for (n, action) in ["run", "pause", "resume", "delete"].iter().enumerate() {
        let text = format!("automations {action} {}", automation.id);
        let reply = chat
            .chat
            .command(from_b(crate::support::command(
                &format!("B4{n}"),
                "U9",
                &text,
            )))
            .await;
        assert!(
            reply.text.to_lowercase().contains("no automation")
                || reply.text.to_lowercase().contains("not found"),
            "{text}: {}",
            reply.text
        );
    }
    // Listing shows none of A's.
    let list = chat
        .chat
        .command(from_b(crate::support::command("B5", "U9", "automations")))
        .await;
    assert!(!list.text.contains("A's digest"), "{}", list.text);

    // Nothing of tenant A changed.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let still = chat
        .store
        .inbox()
        .get(&chat.tenant, &item.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(still.state, InboxItemState::Pending);
    let kept = chat
        .store
        .automations()
        .get(&chat.tenant, &automation.id)
        .await
        .unwrap()
        .expect("A's automation is still there");
    assert!(kept.enabled);
    assert_eq!(kept.run_count, 0);
}
