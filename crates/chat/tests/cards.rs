//! Cards through the chat layer: names, not ids, and cards remembered across a restart.

use std::sync::Arc;
use std::time::Duration;

use workmate_adapter::{CardId, CardStore, Coalescer, RetryPolicy};
use workmate_cards::{Block, Card};
use workmate_chat::StoreCards;

use crate::support::{FakePlatform, SHELL, TestChat, eventually, message};

#[tokio::test]
async fn approval_cards_name_the_requester_as_the_platform_shows_them() {
    let chat = TestChat::new(SHELL).await;
    chat.send(message("Ev1", "U1", "t1", "run it")).await;
    eventually("an approval card names Alice", || async {
        chat.platform
            .card_texts()
            .iter()
            .any(|t| t.contains("Alice") && !t.contains("feishu-U1"))
    })
    .await;
}

fn state(n: i64) -> Card {
    Card {
        blocks: vec![Block::Heading {
            text: n.to_string(),
        }],
    }
}

#[tokio::test]
async fn a_card_posted_before_a_restart_is_updated_after_it() {
    let chat = TestChat::new(SHELL).await;
    let store: Arc<dyn CardStore> = Arc::new(StoreCards(chat.store.clone()));
    let card = CardId {
        tenant: chat.tenant.clone(),
        session: "s1".into(),
        card_key: "turn:1".into(),
    };
    let target = workmate_adapter::ChatTarget {
        chat_id: "C1".into(),
        thread_id: Some("t1".into()),
    };
    let policy = RetryPolicy {
        jitter: false,
        ..RetryPolicy::default()
    };
    let before = FakePlatform::new();
    let c = Coalescer::new(before.clone(), store.clone(), policy.clone());
    c.submit(card.clone(), target.clone(), state(0)).unwrap();
    c.flush(&card).await.unwrap();
    c.shutdown(Duration::from_secs(1)).await;

    let after = FakePlatform::new();
    let c = Coalescer::new(after.clone(), store, policy);
    c.submit(card.clone(), target, state(1)).unwrap();
    c.flush(&card).await.unwrap();
    assert!(
        matches!(&after.sent()[..], [crate::support::Sent::Update { message, .. }] if message == "m0"),
        "{:#?}",
        after.sent()
    );
}
