//! A fifth platform, added as a new platform is: its adapter (here the test fake), its
//! descriptor, and one registration. The chat layer answers on it, names it, reaches its chats
//! with `send_message` and recognises its redeliveries, knowing it only by its
//! descriptor. It rides an existing surface value for its rows, and nothing of that surface's
//! platform leaks into what its people see.

use std::time::Duration;

use workmate_adapter::{ChatPlatform, Inbound, Taken};
use workmate_cards::ButtonAction;
use workmate_protocol::Surface;
use workmate_store::SessionKey;

use crate::support::{
    CHAT, DONE, FakePlatform, INSTALLATION, PATIENCE, Sent, TestChat, click, eventually,
    eventually_holds, message,
};

/// Its rooms are called `room-<n>`; anything else is not one of its chats.
fn room_id(id: &str) -> bool {
    id.strip_prefix("room-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

const FIFTH: ChatPlatform = ChatPlatform {
    surface: Surface::Wecom,
    label: "Fifth",
    target_names: &["fifth", "5th"],
    chat_id: room_id,
    dedupe_window: Duration::from_secs(90 * 60),
};

/// A model that, asked for the digest, posts it into another room of the platform and answers;
/// asked anything else, just answers.
const POSTS: &str = r#"{"conversations": [
    {"when": "digest", "turns": [
        {"tool_calls": [{"name": "send_message", "arguments": {"target": "5th:room-7", "text": "The digest."}}]},
        {"text": "Posted."}]},
    {"when": "*", "turns": [{"text": "Hello there."}]}]}"#;

fn on_fifth(inbound: Inbound) -> Inbound {
    Inbound {
        surface: FIFTH.surface,
        ..inbound
    }
}

#[tokio::test]
async fn two_people_in_one_room_of_a_fifth_platform_are_answered_and_it_goes_by_its_own_name() {
    let chat = TestChat::on_platform(POSTS, FakePlatform::describing(&FIFTH)).await;
    chat.send(on_fifth(message("Ev1", "U1", "t1", "post the digest")))
        .await;
    chat.send(on_fifth(message("Ev2", "U2", "t2", "and here?")))
        .await;
    // The post waits for the first person's approval, on a card in their thread.
    let approve = eventually("the approval card in t1", PATIENCE, || {
        std::future::ready(chat.platform.sent().into_iter().find_map(|s| {
            match s {
                Sent::Post {
                    thread: Some(thread),
                    card,
                } if thread == "t1" => card["buttons"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| serde_json::from_value::<ButtonAction>(b.clone()).ok())
                    .find(|b| matches!(b, ButtonAction::Resolve { .. })),
                _ => None,
            }
        }))
    })
    .await;
    chat.send(on_fifth(click("Cl1", "U1", "t1", approve))).await;
    eventually_holds("the digest reaches room-7", PATIENCE, || async {
        chat.platform.sent().iter().any(|s| {
            matches!(s, Sent::Post { card, .. } if card["text"].as_str().unwrap_or_default().contains("The digest."))
        })
    })
    .await;
    for answer in ["Posted.", "Hello there."] {
        eventually_holds(answer, PATIENCE, || async {
            chat.platform
                .card_texts()
                .iter()
                .any(|t| t.contains(answer))
        })
        .await;
    }
    // The workspace is named after the platform's descriptor, not the surface it rides.
    let tenant = chat
        .store
        .tenants()
        .get(&chat.tenant)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tenant.name, format!("Fifth {INSTALLATION}"));
    assert!(
        chat.platform
            .card_texts()
            .iter()
            .all(|t| !t.contains("WeCom")),
        "{:#?}",
        chat.platform.card_texts()
    );
}

#[tokio::test]
async fn a_redelivery_is_acknowledged_and_not_run_again() {
    let chat = TestChat::on_platform(DONE, FakePlatform::describing(&FIFTH)).await;
    let first = chat
        .send(on_fifth(message("Ev1", "U1", "t1", "hello")))
        .await;
    let again = chat
        .send(on_fifth(message("Ev1", "U1", "t1", "hello")))
        .await;
    assert_eq!((first, again), (Taken::Stored, Taken::Duplicate));
    let key = SessionKey {
        surface: FIFTH.surface,
        chat_id: CHAT.into(),
        thread_id: "t1".into(),
    };
    let session = eventually("the thread's session", PATIENCE, || async {
        chat.store
            .sessions()
            .find_by_key(&chat.tenant, &key)
            .await
            .unwrap()
    })
    .await;
    eventually_holds("the one turn ends", PATIENCE, || async {
        chat.last_turn_ended(&session).await
    })
    .await;
    assert_eq!(chat.turns(&session).await, 1);
}
