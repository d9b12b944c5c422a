//! The tenant setting `identity_binding` in the chat layer, on the fake platform: an unlinked
//! account gets the "link your account" card once when it may chat, every time it writes when
//! it may not (and nothing runs), never for thread text that does not address workmate; the card
//! says so when single sign-on is not set up, and `/workmate link` brings it back.

use std::time::Duration;

use workmate_adapter::InboundKind;

use crate::support::{DONE, PATIENCE, TestChat, eventually_holds, inbound, message};

async fn requiring(chat: &TestChat, unbound_may_chat: bool) {
    chat.store
        .tenants()
        .ensure(&chat.tenant, "Acme")
        .await
        .unwrap();
    let settings = serde_json::json!({
        "identity_binding": {"required": true, "unbound_may_chat": unbound_may_chat}
    });
    chat.store
        .tenants()
        .set_settings(&chat.tenant, &settings)
        .await
        .unwrap();
}

fn cards_to(chat: &TestChat, user: &str) -> usize {
    chat.platform
        .private_to(user)
        .iter()
        .filter(|t| t.contains("Link your account"))
        .count()
}

#[tokio::test]
async fn an_unlinked_account_that_may_chat_gets_the_card_once() {
    let chat = TestChat::new(DONE).await;
    requiring(&chat, true).await;
    chat.send(message("E1", "U1", "t1", "hello")).await;
    let session = chat.session("t1").await;
    eventually_holds("the turn ends", PATIENCE, || chat.last_turn_ended(&session)).await;
    chat.send(message("E2", "U1", "t1", "again")).await;
    eventually_holds("the second turn", PATIENCE, || async {
        chat.turns(&session).await == 2
    })
    .await;
    assert_eq!(cards_to(&chat, "U1"), 1);
    let text = chat.platform.private_to("U1").join("\n");
    assert!(
        text.contains("not set up"),
        "without single sign-on it says so: {text}"
    );
    // Asked for, it comes again.
    chat.send(message("E3", "U1", "t1", "/workmate link")).await;
    eventually_holds("the card again", PATIENCE, || async {
        cards_to(&chat, "U1") == 2
    })
    .await;
}

#[tokio::test]
async fn an_unlinked_account_that_may_not_chat_gets_the_card_and_no_turn() {
    let chat = TestChat::new(DONE).await;
    requiring(&chat, false).await;
    chat.send(message("E1", "U2", "t1", "hello")).await;
    eventually_holds("the card", PATIENCE, || async {
        cards_to(&chat, "U2") == 1
    })
    .await;
    chat.send(message("E2", "U2", "t1", "hello?")).await;
    eventually_holds("the card again", PATIENCE, || async {
        cards_to(&chat, "U2") == 2
    })
    .await;
    // People talking in the thread among themselves bring no card.
    let aside = inbound(
        "E3",
        "U2",
        Some("t1"),
        InboundKind::Reply {
            text: "lunch?".into(),
        },
    );
    chat.send(aside).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(cards_to(&chat, "U2"), 2);
    let sessions = chat.store.sessions().list(&chat.tenant, 10).await.unwrap();
    assert!(sessions.is_empty(), "no session for an unlinked account");
}
