//! Answering from chat: approval buttons and replies quoting a reply token go through the same
//! authority checks.

use workmate_cards::ButtonAction;
use workmate_engine::reply_token;
use workmate_protocol::{ApprovalChoice, Resolution};
use workmate_store::{InboxFilter, InboxItem, InboxItemState, IntakeKey, IntakeState};

use crate::support::{
    PATIENCE, SHELL, SURFACE, TestChat, click, eventually, eventually_holds, inbound, message,
};

async fn parked(chat: &TestChat) -> InboxItem {
    chat.send(message("Ev1", "U1", "t1", "run it")).await;
    eventually("the approval is parked", PATIENCE, || async {
        chat.store
            .inbox()
            .list(&chat.tenant, &InboxFilter::default(), 10)
            .await
            .unwrap()
            .into_iter()
            .next()
    })
    .await
}

async fn state_of(chat: &TestChat, item: &InboxItem) -> InboxItem {
    chat.store
        .inbox()
        .get(&chat.tenant, &item.id)
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_reply_with_the_token_resolves_for_the_owner_and_not_for_a_stranger() {
    let chat = TestChat::new(SHELL).await;
    let item = parked(&chat).await;
    let token = reply_token(&item.id);
    // A stranger replies in a thread without addressing workmate.
    let stranger = inbound(
        "Ev2",
        "U2",
        Some("t1"),
        workmate_adapter::InboundKind::Reply {
            text: format!("approve {token}"),
        },
    );
    chat.send(stranger).await;
    eventually_holds("the stranger is told why", PATIENCE, || async {
        !chat.platform.private_to("U2").is_empty()
    })
    .await;
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Pending);
    chat.send(message("Ev3", "U1", "t1", &format!("👍 {token}")))
        .await;
    eventually_holds("the owner's reply resolves it", PATIENCE, || async {
        state_of(&chat, &item).await.state == InboxItemState::Resolved
    })
    .await;
    let resolved = state_of(&chat, &item).await;
    assert_eq!(
        resolved.resolution,
        Some(Resolution::Approval {
            choice: ApprovalChoice::Once
        })
    );
    eventually_holds("the turn goes on to its answer", PATIENCE, || async {
        chat.platform
            .card_texts()
            .iter()
            .any(|t| t.contains("Done."))
    })
    .await;
}

#[tokio::test]
async fn a_reply_without_a_token_is_ignored_and_a_message_without_one_is_a_message() {
    let chat = TestChat::new(SHELL).await;
    let item = parked(&chat).await;
    let chatter = inbound(
        "Ev2",
        "U1",
        Some("t1"),
        workmate_adapter::InboundKind::Reply {
            text: "approve".into(),
        },
    );
    chat.send(chatter).await;
    chat.send(message("Ev3", "U1", "t1", "deny")).await;
    let row = |id: &str| IntakeKey {
        tenant_id: chat.tenant.clone(),
        platform: SURFACE.as_str().into(),
        delivery_id: id.into(),
    };
    eventually_holds(
        "the reply is done and the message waits to steer the turn",
        PATIENCE,
        || async {
            let intake = chat.store.intake();
            intake.get(&row("Ev2")).await.unwrap().unwrap().state == IntakeState::Done
                && intake.get(&row("Ev3")).await.unwrap().unwrap().state == IntakeState::Running
        },
    )
    .await;
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Pending);
}

#[tokio::test]
async fn a_click_by_a_stranger_is_refused_and_the_owners_click_approves() {
    let chat = TestChat::new(SHELL).await;
    let item = parked(&chat).await;
    let approve = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    };
    chat.send(click("Cl1", "U2", "t1", approve.clone())).await;
    eventually_holds("the stranger is told why", PATIENCE, || async {
        !chat.platform.private_to("U2").is_empty()
    })
    .await;
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Pending);
    chat.send(click("Cl2", "U1", "t1", approve.clone())).await;
    eventually_holds("the owner's click resolves it", PATIENCE, || async {
        state_of(&chat, &item).await.state == InboxItemState::Resolved
    })
    .await;
    // A replayed click is not applied again, and tells nobody anything.
    let before = chat.platform.private_to("U1").len();
    assert_eq!(
        chat.send(click("Cl2", "U1", "t1", approve)).await,
        workmate_chat::Taken::Duplicate
    );
    assert_eq!(chat.platform.private_to("U1").len(), before);
}

#[tokio::test]
async fn the_answered_approval_card_is_updated_for_everyone_not_only_the_clicker() {
    let chat = TestChat::new(SHELL).await;
    let item = parked(&chat).await;
    let approve = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    };
    chat.send(click("Cl1", "U1", "t1", approve)).await;
    // The card everyone in the thread sees is the posted message: it is updated in place, and
    // nothing about the answer goes to the clicker alone.
    eventually_holds(
        "the shared approval card says who approved",
        PATIENCE,
        || async {
            chat.platform.sent().iter().any(|s| {
                matches!(s, crate::support::Sent::Update { card, .. }
                if card["text"].as_str().unwrap_or_default().contains("Approved by Alice"))
            })
        },
    )
    .await;
    assert!(
        chat.platform.private_to("U1").is_empty(),
        "{:#?}",
        chat.platform.sent()
    );
}

#[tokio::test]
async fn a_click_answered_at_once_shows_the_outcome_and_the_card_and_a_second_click_loses() {
    use workmate_adapter::ToastKind;
    let chat = TestChat::new(SHELL).await;
    let item = parked(&chat).await;
    let approve = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    };
    // A stranger's click changes nothing: an error toast, and the card as it is, which a
    // platform without toasts shows the stranger alone with the refusal on it.
    let refused = chat
        .chat
        .click_now(click("Cs", "U2", "t1", approve.clone()))
        .await
        .unwrap();
    assert_eq!(refused.kind, ToastKind::Error, "{refused:?}");
    let own_copy = serde_json::to_string(&refused.refused_card().unwrap()).unwrap();
    assert!(
        own_copy.contains(&format!("⛔ {}", refused.toast)),
        "{own_copy}"
    );
    assert!(own_copy.contains("once"), "the buttons stay: {own_copy}");
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Pending);
    // The owner's click wins and returns the card as everyone will see it.
    let won = chat
        .chat
        .click_now(click("Co", "U1", "t1", approve.clone()))
        .await
        .unwrap();
    assert_eq!(
        (won.kind, won.toast.as_str()),
        (ToastKind::Success, "Approved.")
    );
    let card = serde_json::to_string(&won.card.expect("the updated card")).unwrap();
    assert!(card.contains("Approved by"), "{card}");
    assert!(
        !card.contains("\"actions\""),
        "no buttons once answered: {card}"
    );
    // The same click delivered again is not applied twice.
    let again = chat
        .chat
        .click_now(click("Co", "U1", "t1", approve.clone()))
        .await
        .unwrap();
    assert_eq!(again.kind, ToastKind::Info);
    // Someone else clicking Deny afterwards is told who answered first.
    let deny = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Deny,
        },
    };
    let late = chat
        .chat
        .click_now(click("Cl", "U1", "t1", deny))
        .await
        .unwrap();
    assert_eq!(late.kind, ToastKind::Success, "{late:?}");
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Resolved);
}

#[tokio::test]
async fn a_two_of_three_approval_counts_distinct_approvers_and_refuses_the_requester() {
    use workmate_adapter::ToastKind;
    let admins = ["U3", "U4", "U5"].map(String::from).to_vec();
    let chat = TestChat::with(
        SHELL,
        workmate_chat::PlatformSettings {
            admins,
            admins_in: None,
        },
    )
    .await;
    let settings = serde_json::json!({
        "approver_groups": {"oncall": ["feishu-U1", "feishu-U3", "feishu-U4"]},
        "approval_quorum": [{"category": "*", "required": 2, "group": "oncall"}],
    });
    let tenants = chat.store.tenants();
    tenants.ensure(&chat.tenant, "T1").await.unwrap();
    tenants.set_settings(&chat.tenant, &settings).await.unwrap();
    let item = parked(&chat).await;
    let approve = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    };
    // The requester is in the group, and is refused.
    let own = chat
        .chat
        .click_now(click("Q1", "U1", "t1", approve.clone()))
        .await
        .unwrap();
    assert_eq!(own.kind, ToastKind::Error, "{own:?}");
    assert!(own.toast.contains("never counts"), "{}", own.toast);
    // An admin outside the group does not count.
    let outside = chat
        .chat
        .click_now(click("Q2", "U5", "t1", approve.clone()))
        .await
        .unwrap();
    assert_eq!(outside.kind, ToastKind::Error, "{outside:?}");
    // The first approver is counted, and the card shows it to everyone.
    let first = chat
        .chat
        .click_now(click("Q3", "U3", "t1", approve.clone()))
        .await
        .unwrap();
    assert_eq!(
        (first.kind, first.toast.as_str()),
        (
            ToastKind::Success,
            "Approval counted (1 of 2); 1 more approval needed."
        )
    );
    let card = serde_json::to_string(&first.card.expect("the card")).unwrap();
    assert!(card.contains("1 of 2 approvals"), "{card}");
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Pending);
    // The second distinct approver completes it.
    let second = chat
        .chat
        .click_now(click("Q4", "U4", "t1", approve))
        .await
        .unwrap();
    assert_eq!(second.kind, ToastKind::Success, "{second:?}");
    assert_eq!(state_of(&chat, &item).await.state, InboxItemState::Resolved);
    let card = serde_json::to_string(&second.card.expect("the card")).unwrap();
    assert!(card.contains("2 of 2 approvals"), "{card}");
}
