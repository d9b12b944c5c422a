//! Nothing per card stays in memory while idle: once a few dozen threads' turns have ended and
//! their pumps had nothing to do for the idle time, no pump runs, no card update waits, and the
//! views kept for the sessions' next pumps are within their bound.

use std::time::Duration;

use workmate_chat::ChatConfig;

use crate::support::{DONE, PATIENCE, TestChat, eventually_holds, message};

const THREADS: usize = 40;

fn cached(chat: &workmate_chat::Chat, cache: &str) -> u64 {
    chat.cached_items()
        .iter()
        .find(|(name, _)| *name == cache)
        .map(|(_, items)| *items)
        .unwrap_or_else(|| panic!("no cache {cache} in {:?}", chat.cached_items()))
}

#[tokio::test]
async fn idle_pumps_stop_and_leave_no_pending_card_update() {
    let t = TestChat::new(DONE).await;
    // Only the layer under test runs deliveries.
    t.chat.shutdown(Duration::from_secs(1)).await;
    let chat = t.configured("replica-m", DONE, |config| ChatConfig {
        pump_idle: Duration::from_millis(300),
        ..config
    });
    chat.start();
    for n in 0..THREADS {
        let id = format!("Ev{n}");
        chat.accept(message(&id, "U1", &id, "hello")).await.unwrap();
    }
    let mut most = 0;
    for n in 0..THREADS {
        let session = t.session(&format!("Ev{n}")).await;
        eventually_holds("the turn's end", PATIENCE, || t.last_turn_ended(&session)).await;
        most = most.max(chat.active_pumps());
    }
    assert!(most > 0, "pumps ran while the turns did");
    eventually_holds("every pump stopped", PATIENCE, || async {
        chat.active_pumps() == 0
    })
    .await;
    assert_eq!(cached(&chat, "card_updates"), 0, "no card update waits");
    assert!(cached(&chat, "card_views") <= 512);
    chat.shutdown(Duration::from_secs(1)).await;
}
