//! Cards through the chat layer: names, not ids, and cards remembered across a restart.

use std::sync::Arc;
use std::time::Duration;

use workmate_adapter::{CardId, CardStore, Coalescer, RetryPolicy};
use workmate_cards::{Block, Card};
use workmate_chat::StoreCards;

use crate::support::{
    FakePlatform, PATIENCE, SHELL, Sent, TestChat, click, eventually, eventually_holds, message,
};

#[tokio::test]
async fn approval_cards_name_the_requester_as_the_platform_shows_them() {
    let chat = TestChat::new(SHELL).await;
    chat.send(message("Ev1", "U1", "t1", "run it")).await;
    eventually_holds("an approval card names Alice", PATIENCE, || async {
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
        reply: None,
        person: None,
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

#[tokio::test]
async fn the_thread_reads_in_the_order_things_happened() {
    let chat = TestChat::new(SHELL).await;
    chat.send(message("Ev1", "U1", "t1", "run it")).await;
    let approve = eventually("the approval card's buttons", PATIENCE, || {
        std::future::ready(
            chat.platform
                .buttons()
                .into_iter()
                .find(|b| matches!(b, workmate_cards::ButtonAction::Resolve { .. })),
        )
    })
    .await;
    chat.send(click("Cl1", "U1", "t1", approve)).await;
    eventually_holds("the answer", PATIENCE, || async {
        chat.platform
            .card_texts()
            .iter()
            .any(|t| t.contains("Done."))
    })
    .await;
    // Posts, in order: the turn card, the approval card, then the rest of the turn below it;
    // the answer never lands in a card above the approval.
    let posts: Vec<String> = chat
        .platform
        .sent()
        .into_iter()
        .filter_map(|s| match s {
            Sent::Post { card, .. } => Some(card["text"].as_str().unwrap_or_default().to_owned()),
            _ => None,
        })
        .collect();
    let approval = posts
        .iter()
        .position(|t| t.contains("[Approve once]"))
        .unwrap();
    let first_turn_card = 0;
    assert!(first_turn_card < approval, "{posts:#?}");
    let answer_card = posts.len() - 1;
    assert!(answer_card > approval, "{posts:#?}");
    let above = chat.platform.sent().into_iter().filter_map(|s| match s {
        Sent::Update { message, card } if message == "m0" => {
            Some(card["text"].as_str().unwrap_or_default().to_owned())
        }
        _ => None,
    });
    assert!(
        above.into_iter().all(|t| !t.contains("Done.")),
        "the first card keeps what it showed"
    );
}

#[tokio::test]
async fn a_long_answer_goes_on_in_the_next_card_instead_of_being_cut() {
    let answer: String = (0..80)
        .map(|n| format!("Paragraph {n:03}: the quick brown fox jumps over the lazy dog.\\n\\n"))
        .collect();
    let script = format!(
        r#"{{"conversations": [{{"when": "*", "turns": [{{"text": "{answer}", "chunk_delay_ms": 1}}]}}]}}"#
    );
    let chat = TestChat::new(&script).await;
    chat.send(message("Ev1", "U1", "t1", "write it all")).await;
    let session = chat.session("t1").await;
    eventually_holds("the turn ends", PATIENCE, || chat.last_turn_ended(&session)).await;
    // About 5,200 bytes over a budget of 2,000: three cards, one below the other.
    eventually_holds("the last paragraph is shown", PATIENCE, || async {
        chat.platform
            .card_texts()
            .iter()
            .any(|t| t.contains("Paragraph 079"))
    })
    .await;
    let posted = chat.platform.posted_in("t1");
    assert_eq!(posted.len(), 3, "{posted:#?}");
    let texts = chat.platform.card_texts();
    for n in [0, 40, 79] {
        let paragraph = format!("Paragraph {n:03}");
        assert!(
            texts.iter().any(|t| t.contains(&paragraph)),
            "{paragraph} is shown"
        );
    }
    assert!(
        texts.iter().all(|t| !t.contains("not shown")),
        "nothing is cut"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains(workmate_cards::CONTINUED_BELOW)),
        "a page says the answer goes on below"
    );
}
