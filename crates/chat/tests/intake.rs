//! Durable intake: what is acknowledged runs exactly once, replays are not applied again, and a
//! restart finishes what a crash left.

use std::time::Duration;

use workmate_chat::Taken;
use workmate_store::{IntakeKey, IntakeState, NewDelivery};

use crate::support::{DONE, PATIENCE, SHELL, SURFACE, TestChat, eventually_holds, message};

fn key(chat: &TestChat, id: &str) -> IntakeKey {
    IntakeKey {
        tenant_id: chat.tenant.clone(),
        platform: SURFACE.as_str().into(),
        delivery_id: id.into(),
    }
}

async fn state(chat: &TestChat, id: &str) -> Option<IntakeState> {
    chat.store
        .intake()
        .get(&key(chat, id))
        .await
        .unwrap()
        .map(|d| d.state)
}

#[tokio::test]
async fn a_message_runs_one_turn_and_its_row_is_done() {
    let chat = TestChat::new(DONE).await;
    assert_eq!(
        chat.send(message("Ev1", "U1", "t1", "hello")).await,
        Taken::Stored
    );
    let session = chat.session("t1").await;
    eventually_holds("the delivery is done", PATIENCE, || async {
        state(&chat, "Ev1").await == Some(IntakeState::Done)
    })
    .await;
    eventually_holds("the answer is on the turn card", PATIENCE, || async {
        chat.platform
            .card_texts()
            .iter()
            .any(|t| t.contains("Done."))
    })
    .await;
    assert_eq!(chat.turns(&session).await, 1);
    assert_eq!(session.owner.as_str(), "feishu-U1");
}

#[tokio::test]
async fn a_redelivery_is_acknowledged_and_not_applied() {
    let chat = TestChat::new(DONE).await;
    assert_eq!(
        chat.send(message("Ev1", "U1", "t1", "hello")).await,
        Taken::Stored
    );
    for _ in 0..3 {
        assert_eq!(
            chat.send(message("Ev1", "U1", "t1", "hello")).await,
            Taken::Duplicate
        );
    }
    let session = chat.session("t1").await;
    eventually_holds("the turn ends", PATIENCE, || async {
        chat.last_turn_ended(&session).await
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(chat.turns(&session).await, 1);
}

#[tokio::test]
async fn deliveries_a_crash_left_run_exactly_once_after_a_restart() {
    let first = TestChat::new(DONE).await;
    let tenant = first.tenant.clone();
    let store = first.store.clone();
    // The moment of the crash: three deliveries were acknowledged; one was never claimed, one
    // was claimed by a worker that died, and one was done before the crash.
    first.chat.shutdown(Duration::from_secs(1)).await;
    for (id, thread) in [("Ev1", "t1"), ("Ev2", "t2"), ("Ev3", "t3")] {
        let inbound = message(id, "U1", thread, "hello");
        let new = NewDelivery {
            platform: SURFACE.as_str().into(),
            delivery_id: id.into(),
            kind: "message".into(),
            payload: serde_json::to_value(&inbound).unwrap(),
            ttl_ms: 3_600_000,
        };
        assert!(store.intake().accept(&tenant, &new).await.unwrap());
    }
    store
        .intake()
        .claim(&key(&first, "Ev2"), "other-replica", 1)
        .await
        .unwrap()
        .unwrap();
    store
        .intake()
        .claim(&key(&first, "Ev3"), "other-replica", 1)
        .await
        .unwrap()
        .unwrap();
    store.intake().finish(&key(&first, "Ev3")).await.unwrap();

    let chat = first.restarted(DONE).await;
    for thread in ["t1", "t2"] {
        let session = chat.session(thread).await;
        eventually_holds("the recovered turn ends", PATIENCE, || async {
            chat.last_turn_ended(&session).await
        })
        .await;
        assert_eq!(chat.turns(&session).await, 1, "{thread}");
    }
    eventually_holds("both rows are done", PATIENCE, || async {
        state(&chat, "Ev1").await == Some(IntakeState::Done)
            && state(&chat, "Ev2").await == Some(IntakeState::Done)
    })
    .await;
    let t3 = workmate_store::SessionKey {
        surface: SURFACE,
        chat_id: crate::support::CHAT.into(),
        thread_id: "t3".into(),
    };
    assert!(
        chat.store
            .sessions()
            .find_by_key(&chat.tenant, &t3)
            .await
            .unwrap()
            .is_none(),
        "a delivery done before the crash is not run again"
    );
}

#[tokio::test]
async fn a_restarted_replica_takes_back_its_own_rows_without_waiting_for_their_leases() {
    let first = TestChat::new(DONE).await;
    let tenant = first.tenant.clone();
    let store = first.store.clone();
    first.chat.shutdown(Duration::from_secs(1)).await;
    // Killed while it ran Ev1; Ev2 is held by another replica, alive. Both leases last ten
    // minutes.
    let replica = workmate_engine::EngineConfig::default().replica;
    for (id, thread, holder) in [
        ("Ev1", "t1", replica.as_str()),
        ("Ev2", "t2", "other-replica"),
    ] {
        let inbound = message(id, "U1", thread, "hello");
        let new = NewDelivery {
            platform: SURFACE.as_str().into(),
            delivery_id: id.into(),
            kind: "message".into(),
            payload: serde_json::to_value(&inbound).unwrap(),
            ttl_ms: 3_600_000,
        };
        assert!(
            store
                .intake()
                .accept_claimed(&tenant, &new, holder, 600_000)
                .await
                .unwrap()
        );
    }
    // The replica starts again a moment after it was killed.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let chat = first.restarted(DONE).await;
    let session = chat.session("t1").await;
    eventually_holds("its own row runs at once", PATIENCE, || async {
        state(&chat, "Ev1").await == Some(IntakeState::Done)
    })
    .await;
    assert_eq!(chat.turns(&session).await, 1);
    assert_eq!(
        state(&chat, "Ev2").await,
        Some(IntakeState::Running),
        "another replica's row stays with it while its lease holds"
    );
}

#[tokio::test]
async fn a_burst_is_stored_whole_and_every_message_runs() {
    let chat = TestChat::new(DONE).await;
    let mut sends = Vec::new();
    for i in 0..60 {
        let layer = chat.chat.clone();
        sends.push(tokio::spawn(async move {
            layer
                .accept(message(&format!("Ev{i}"), "U1", &format!("t{i}"), "hello"))
                .await
                .unwrap()
        }));
    }
    for send in sends {
        assert_eq!(send.await.unwrap(), Taken::Stored);
    }
    eventually_holds("every delivery is done", PATIENCE, || async {
        chat.store.intake().unfinished().await.unwrap() == 0
    })
    .await;
    for i in [0, 29, 59] {
        let session = chat.session(&format!("t{i}")).await;
        assert_eq!(chat.turns(&session).await, 1);
    }
}

#[tokio::test]
async fn a_message_that_keeps_failing_is_given_up_and_its_thread_told() {
    let chat = TestChat::new(DONE).await;
    // An engine that takes nothing: every attempt fails.
    chat.hub.shutdown().await;
    assert_eq!(
        chat.send(message("Ev1", "U1", "t1", "hello")).await,
        Taken::Stored
    );
    eventually_holds("the thread is told", PATIENCE, || async {
        chat.platform.sent().iter().any(|s| {
            matches!(s, crate::support::Sent::Notice { thread, text }
                if thread.as_deref() == Some("t1") && text.contains("could not take this message"))
        })
    })
    .await;
    assert_eq!(state(&chat, "Ev1").await, Some(IntakeState::Failed));
}

#[tokio::test]
async fn nothing_is_acknowledged_when_it_cannot_be_stored() {
    let chat = TestChat::new(DONE).await;
    chat.store.close().await;
    let refused = chat.chat.accept(message("Ev1", "U1", "t1", "hello")).await;
    assert!(
        refused.is_err(),
        "a delivery the database did not take is not acknowledged"
    );
    let reply = chat
        .chat
        .command(crate::support::command("tr1", "U1", "whoami"))
        .await;
    assert!(
        reply.text.contains("could not run that command"),
        "{}",
        reply.text
    );
}

#[tokio::test]
async fn a_message_that_reaches_another_replica_steers_the_turn_where_it_runs() {
    let a = TestChat::new(SHELL).await;
    a.send(message("Ev1", "U1", "t1", "run it")).await;
    let approve = crate::support::eventually("the approval card's buttons", PATIENCE, || {
        std::future::ready(
            a.platform
                .buttons()
                .into_iter()
                .find(|b| matches!(b, workmate_cards::ButtonAction::Resolve { .. })),
        )
    })
    .await;
    // The turn waits for its approval on replica a; the next message reaches replica b.
    let b = a.sharing("replica-b", SHELL);
    assert_eq!(
        b.accept(message("Ev2", "U1", "t1", "and also this"))
            .await
            .unwrap(),
        Taken::Stored
    );
    // b's own claim was the first attempt; a's, once b told it the row waits, is the second
    // (b tries again only after a pause).
    eventually_holds(
        "b hands the message to a, which steers its turn",
        PATIENCE,
        || async {
            let row = a.store.intake().get(&key(&a, "Ev2")).await.unwrap();
            row.is_some_and(|r| r.attempts >= 2 && r.state == IntakeState::Running)
        },
    )
    .await;
    // a joins it to the parked turn as it would a message of its own.
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.send(crate::support::click("Cl1", "U1", "t1", approve))
        .await;
    let session = a.session("t1").await;
    eventually_holds("the turn ends", PATIENCE, || async {
        a.last_turn_ended(&session).await
    })
    .await;
    assert_eq!(
        a.turns(&session).await,
        1,
        "the message joined the running turn"
    );
    let history = a
        .store
        .messages()
        .list(&a.tenant, &session.id)
        .await
        .unwrap();
    let users: Vec<String> = history
        .iter()
        .filter_map(|m| match m {
            workmate_protocol::Message::User {
                content: workmate_protocol::UserContent::Text(t),
                ..
            } => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(users.len(), 2, "{history:#?}");
    assert!(users[1].contains("and also this"), "{users:?}");
    assert_eq!(state(&a, "Ev2").await, Some(IntakeState::Done));
    b.shutdown(Duration::from_secs(1)).await;
}
