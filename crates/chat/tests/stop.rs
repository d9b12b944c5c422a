//! Stopping a runaway turn from chat: the thread command, the Stop button, and the native
//! command's list.

use workmate_cards::ButtonAction;

use crate::support::{
    PATIENCE, SLOW, TestChat, click, command, eventually, eventually_holds, message,
};

async fn streaming(chat: &TestChat) -> workmate_store::SessionRecord {
    chat.send(message("Ev1", "U1", "t1", "tell me a story"))
        .await;
    let session = chat.session("t1").await;
    // Running, and its turn_start stored (the card's Stop button names that turn).
    eventually_holds("the turn is streaming", PATIENCE, || async {
        chat.hub
            .is_running(&chat.tenant, &session.id)
            .await
            .unwrap()
            && chat.turns(&session).await == 1
    })
    .await;
    session
}

#[tokio::test]
async fn the_thread_command_stops_a_streaming_turn_for_its_owner_only() {
    let chat = TestChat::new(SLOW).await;
    let session = streaming(&chat).await;
    chat.send(message("Ev2", "U2", "t1", "/workmate stop"))
        .await;
    eventually_holds("the stranger is refused", PATIENCE, || async {
        chat.platform
            .private_to("U2")
            .iter()
            .any(|t| t.contains("Only the conversation's owner"))
    })
    .await;
    assert!(
        chat.hub
            .is_running(&chat.tenant, &session.id)
            .await
            .unwrap()
    );
    chat.send(message("Ev3", "U1", "t1", "/workmate stop"))
        .await;
    eventually_holds("the turn stopped", PATIENCE, || async {
        chat.last_turn_ended(&session).await
    })
    .await;
    assert_eq!(chat.turns(&session).await, 1);
}

#[tokio::test]
async fn the_stop_button_stops_the_turn_it_was_shown_on() {
    let chat = TestChat::new(SLOW).await;
    let session = streaming(&chat).await;
    let stop = eventually("the turn card has a Stop button", PATIENCE, || {
        std::future::ready(
            chat.platform
                .buttons()
                .into_iter()
                .find(|b| matches!(b, ButtonAction::Stop { .. })),
        )
    })
    .await;
    chat.send(click("Cl1", "U1", "t1", stop.clone())).await;
    eventually_holds("the turn stopped", PATIENCE, || async {
        chat.last_turn_ended(&session).await
    })
    .await;
    // The same button after the turn ended stops nothing and says so.
    chat.send(click("Cl2", "U1", "t1", stop)).await;
    eventually_holds("the stale click is answered", PATIENCE, || async {
        chat.platform
            .private_to("U1")
            .iter()
            .any(|t| t.contains("already ended"))
    })
    .await;
}

#[tokio::test]
async fn the_native_stop_lists_the_callers_running_conversations_with_stop_buttons() {
    let chat = TestChat::new(SLOW).await;
    let session = streaming(&chat).await;
    let reply = chat.chat.command(command("tr1", "U1", "stop")).await;
    let card = reply.card.expect("a card with buttons");
    let stops: Vec<_> = card
        .blocks
        .iter()
        .filter_map(|b| match b {
            workmate_cards::Block::Actions(row) => Some(row[0].action.clone()),
            _ => None,
        })
        .collect();
    assert!(
        matches!(&stops[..], [ButtonAction::Stop { session_id, .. }] if *session_id == session.id),
        "{stops:?}"
    );
    let other = chat.chat.command(command("tr2", "U2", "stop")).await;
    assert!(
        other.text.contains("None of your conversations"),
        "{}",
        other.text
    );
    chat.send(click("Cl1", "U1", "t1", stops[0].clone())).await;
    eventually_holds("the turn stopped", PATIENCE, || async {
        chat.last_turn_ended(&session).await
    })
    .await;
}
