//! A deactivated (offboarded) user's chat binding stops working at once: their messages run
//! nothing and they are told why; their clicks change nothing.

use workmate_adapter::ToastKind;
use workmate_cards::ButtonAction;
use workmate_protocol::{ApprovalChoice, Resolution};
use workmate_store::InboxFilter;

use crate::support::{PATIENCE, SHELL, TestChat, click, eventually_holds, message};

#[tokio::test]
async fn a_deactivated_users_messages_run_nothing_and_they_are_told_why() {
    let chat = TestChat::new(SHELL).await;
    // U1 writes once, so their binding exists; then they are offboarded.
    chat.send(message("E1", "U1", "t1", "run it")).await;
    let item = crate::support::eventually("the approval is parked", PATIENCE, || async {
        chat.store
            .inbox()
            .list(&chat.tenant, &InboxFilter::default(), 10)
            .await
            .unwrap()
            .into_iter()
            .next()
    })
    .await;
    let user = "feishu-U1".into();
    let admin = "admin".into();
    chat.store
        .offboarding()
        .deprovision(&chat.tenant, &user, &admin)
        .await
        .unwrap();

    chat.send(message("E2", "U1", "t2", "run it again")).await;
    eventually_holds("they are told why", PATIENCE, || async {
        chat.platform
            .private_to("U1")
            .iter()
            .any(|t| t.contains("deactivated"))
    })
    .await;
    let items = chat
        .store
        .inbox()
        .list(&chat.tenant, &InboxFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(items.len(), 1, "no new turn asked anything");

    let approve = ButtonAction::Resolve {
        item_id: item.id.clone(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    };
    let refused = chat
        .chat
        .click_now(click("C1", "U1", "t1", approve))
        .await
        .unwrap();
    assert_eq!(refused.kind, ToastKind::Error);
    assert!(refused.toast.contains("deactivated"), "{}", refused.toast);
}
