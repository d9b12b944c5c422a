//! Durable intake: a delivery is accepted once, claimed by one worker at a time, and final once
//! done or failed.

use std::collections::BTreeSet;

use workmate_protocol::{EventKind, Message, SessionId, TenantId, UserContent};
use workmate_store::{IntakeKey, IntakeState, NewDelivery, Queue, Store};

use crate::support::tenant_with_session;

const TTL: i64 = 60_000;
const LEASE: i64 = 30_000;

fn delivery(id: &str) -> NewDelivery {
    NewDelivery {
        platform: "slack".into(),
        delivery_id: id.into(),
        kind: "message".into(),
        payload: serde_json::json!({"text": format!("hello {id}")}),
        ttl_ms: TTL,
    }
}

fn key(tenant: &TenantId, id: &str) -> IntakeKey {
    IntakeKey {
        tenant_id: tenant.clone(),
        platform: "slack".into(),
        delivery_id: id.into(),
    }
}

async fn tenant(store: &Store, name: &str) -> TenantId {
    tenant_with_session(store, name).await.0
}

async fn state(store: &Store, key: &IntakeKey) -> IntakeState {
    store.intake().get(key).await.unwrap().unwrap().state
}

backend_matrix! {
    async fn a_redelivery_is_accepted_once(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        assert!(ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap());
        assert!(!ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap());
        let row = ctx.store.intake().get(&key(&t, "Ev1")).await.unwrap().unwrap();
        assert_eq!(row.state, IntakeState::Pending);
        assert_eq!(row.attempts, 0);
        assert_eq!(row.kind, "message");
        assert_eq!(row.payload, serde_json::json!({"text": "hello Ev1"}));
        assert_eq!(row.key(), key(&t, "Ev1"));
        // Another id is new.
        assert!(ctx.store.intake().accept(&t, &delivery("Ev2")).await.unwrap());
        assert_eq!(ctx.store.intake().unfinished().await.unwrap(), 2);
    }

    async fn of_concurrent_accepts_exactly_one_is_new(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let mut racers = Vec::new();
        for _ in 0..8 {
            let (store, t) = (ctx.store.clone(), t.clone());
            racers.push(tokio::spawn(async move { store.intake().accept(&t, &delivery("EvRace")).await.unwrap() }));
        }
        let mut firsts = 0;
        for racer in racers {
            firsts += usize::from(racer.await.unwrap());
        }
        assert_eq!(firsts, 1);
        assert_eq!(ctx.store.intake().unfinished().await.unwrap(), 1);
    }

    async fn a_claimed_row_is_held_until_its_lease_lapses(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap();
        let claimed = ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        assert_eq!((claimed.state, claimed.attempts), (IntakeState::Running, 1));
        assert!(ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().is_none(), "held by the first claim");
        ctx.clock.advance_ms(LEASE);
        assert!(ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().is_none(), "the lease holds up to its last millisecond");
        ctx.clock.advance_ms(1);
        let again = ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        assert_eq!(again.attempts, 2, "a dead worker's row is claimed again");
    }

    async fn a_renewed_lease_holds_off_other_claims_until_the_row_is_done(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap();
        assert!(!ctx.store.intake().renew(&k, LEASE).await.unwrap(), "a pending row has no lease to renew");
        ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        ctx.clock.advance_ms(LEASE - 1);
        assert!(ctx.store.intake().renew(&k, LEASE).await.unwrap());
        ctx.clock.advance_ms(LEASE - 1);
        assert!(ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().is_none(), "the renewal holds");
        ctx.store.intake().finish(&k).await.unwrap();
        assert!(!ctx.store.intake().renew(&k, LEASE).await.unwrap(), "a finished row stops its renewals");
    }

    async fn a_row_stored_claimed_renews_only_while_nobody_took_it_over(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        let intake = ctx.store.intake();
        assert!(intake.accept_claimed(&t, &delivery("Ev1"), "w1", LEASE).await.unwrap());
        let row = intake.get(&k).await.unwrap().unwrap();
        assert_eq!((row.state, row.attempts), (IntakeState::Running, 1), "stored as its first claim");
        assert!(intake.claim(&k, "w1", LEASE).await.unwrap().is_none(), "held by the claiming insert");
        assert!(intake.renew_attempt(&k, 1, LEASE).await.unwrap(), "the first attempt renews its own lease");
        assert!(!intake.renew_attempt(&k, 2, LEASE).await.unwrap(), "another attempt's renewal is refused");
        ctx.clock.advance_ms(LEASE + 1);
        let taken = intake.claim(&k, "w1", LEASE).await.unwrap().unwrap();
        assert_eq!(taken.attempts, 2, "a lapsed lease is taken over");
        assert!(!intake.renew_attempt(&k, 1, LEASE).await.unwrap(), "the first attempt lost the row");
        assert!(intake.renew_attempt(&k, 2, LEASE).await.unwrap());
        intake.finish(&k).await.unwrap();
        assert!(!intake.renew_attempt(&k, 2, LEASE).await.unwrap(), "a finished row stops its renewals");
    }

    async fn a_finished_row_is_never_claimed_or_reopened(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap();
        ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        ctx.store.intake().finish(&k).await.unwrap();
        ctx.store.intake().finish(&k).await.unwrap();
        let row = ctx.store.intake().get(&k).await.unwrap().unwrap();
        assert_eq!(row.state, IntakeState::Done);
        assert_eq!(row.payload, serde_json::json!({}), "the payload is cleared");
        ctx.clock.advance_ms(LEASE + 1);
        assert!(ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().is_none());
        ctx.store.intake().retry_later(&k, 0, "late").await.unwrap();
        ctx.store.intake().fail(&k, "late").await.unwrap();
        assert_eq!(state(&ctx.store, &k).await, IntakeState::Done);
        assert!(!ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap(), "still in the dedupe window");
        assert_eq!(ctx.store.intake().unfinished().await.unwrap(), 0);

        // A failed row is final too.
        let f = key(&t, "Ev2");
        ctx.store.intake().accept(&t, &delivery("Ev2")).await.unwrap();
        ctx.store.intake().claim(&f, "w1", LEASE).await.unwrap().unwrap();
        ctx.store.intake().fail(&f, "no such channel").await.unwrap();
        ctx.store.intake().finish(&f).await.unwrap();
        let row = ctx.store.intake().get(&f).await.unwrap().unwrap();
        assert_eq!(row.state, IntakeState::Failed);
        assert_eq!(row.error.as_deref(), Some("no such channel"));
    }

    async fn claim_due_takes_due_and_lapsed_rows_oldest_first(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        for id in ["Ev1", "Ev2", "Ev3", "Ev4"] {
            ctx.store.intake().accept(&t, &delivery(id)).await.unwrap();
            ctx.clock.advance_ms(10);
        }
        // Ev1 is running under a live lease, Ev2 is done, Ev3 and Ev4 are pending.
        ctx.store.intake().claim(&key(&t, "Ev1"), "w1", LEASE).await.unwrap().unwrap();
        ctx.store.intake().finish(&key(&t, "Ev2")).await.unwrap();
        let ids = |ds: Vec<workmate_store::Delivery>| ds.into_iter().map(|d| d.delivery_id).collect::<Vec<_>>();
        assert_eq!(ids(ctx.store.intake().claim_due(Queue::Chat, 1, "w1", LEASE).await.unwrap()), vec!["Ev3"]);
        assert_eq!(ids(ctx.store.intake().claim_due(Queue::Chat, 10, "w1", LEASE).await.unwrap()), vec!["Ev4"]);
        assert!(ctx.store.intake().claim_due(Queue::Chat, 10, "w1", LEASE).await.unwrap().is_empty());
        // Every lease lapses: the running rows come back, oldest first, the done one never.
        ctx.clock.advance_ms(LEASE + 1);
        let again = ctx.store.intake().claim_due(Queue::Chat, 10, "w1", LEASE).await.unwrap();
        assert!(again.iter().all(|d| d.state == IntakeState::Running));
        assert_eq!(ids(again), vec!["Ev1", "Ev3", "Ev4"]);
    }

    async fn a_restarted_replica_gets_back_only_its_own_rows_of_one_queue(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let command = NewDelivery { platform: workmate_store::API_COMMANDS.into(), ..delivery("Cmd1") };
        let intake = ctx.store.intake();
        assert!(intake.accept_claimed(&t, &delivery("Ev1"), "r1", LEASE).await.unwrap());
        assert!(intake.accept_claimed(&t, &delivery("Ev2"), "r2", LEASE).await.unwrap());
        assert!(intake.accept_claimed(&t, &command, "r1", LEASE).await.unwrap());
        // Every lease is live: nothing is due. Replica r1 starts again a moment later.
        assert!(intake.claim_due(Queue::Chat, 10, "r1", LEASE).await.unwrap().is_empty());
        ctx.clock.advance_ms(1);
        let started = ctx.store.clock_ms();
        assert_eq!(intake.release_claims_of(Queue::Chat, "r1", started).await.unwrap(), 1);
        assert_eq!(state(&ctx.store, &key(&t, "Ev1")).await, IntakeState::Pending);
        assert_eq!(state(&ctx.store, &key(&t, "Ev2")).await, IntakeState::Running, "another replica's row");
        let ids = |ds: Vec<workmate_store::Delivery>| ds.into_iter().map(|d| d.delivery_id).collect::<Vec<_>>();
        assert_eq!(ids(intake.claim_due(Queue::Chat, 10, "r1", LEASE).await.unwrap()), vec!["Ev1"]);
        // What the new life claimed is its own: not given back by a second look.
        assert_eq!(intake.release_claims_of(Queue::Chat, "r1", started).await.unwrap(), 0);
        // The API's commands are another queue: released and claimed only as such.
        assert!(intake.claim_due(Queue::ApiCommands, 10, "r1", LEASE).await.unwrap().is_empty());
        assert_eq!(intake.release_claims_of(Queue::ApiCommands, "r1", started).await.unwrap(), 1);
        assert!(intake.claim_due(Queue::Chat, 10, "r1", LEASE).await.unwrap().is_empty());
        assert_eq!(ids(intake.claim_due(Queue::ApiCommands, 10, "r1", LEASE).await.unwrap()), vec!["Cmd1"]);
    }

    async fn concurrent_claim_due_never_hands_out_a_row_twice(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        for n in 0..40 {
            ctx.store.intake().accept(&t, &delivery(&format!("Ev{n:02}"))).await.unwrap();
        }
        let mut workers = Vec::new();
        for _ in 0..4 {
            let store = ctx.store.clone();
            workers.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = store.intake().claim_due(Queue::Chat, 5, "w1", LEASE).await.unwrap();
                    // A worker whose candidates were all taken stops; whoever took them goes on,
                    // so the last worker stops only when no row is left.
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch.into_iter().map(|d| d.delivery_id));
                }
            }));
        }
        let mut all = Vec::new();
        for worker in workers {
            all.extend(worker.await.unwrap());
        }
        let unique: BTreeSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "no row was claimed twice: {all:?}");
        assert_eq!(all.len(), 40, "every row was claimed");
        let running = ctx.store.intake().unfinished().await.unwrap();
        assert_eq!(running, 40);
        assert!(ctx.store.intake().claim_due(Queue::Chat, 40, "w1", LEASE).await.unwrap().is_empty());
    }

    async fn retry_later_delays_the_next_claim(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap();
        ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        ctx.store.intake().retry_later(&k, 5_000, "rate limited").await.unwrap();
        let row = ctx.store.intake().get(&k).await.unwrap().unwrap();
        assert_eq!((row.state, row.error.as_deref()), (IntakeState::Pending, Some("rate limited")));
        assert!(ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().is_none());
        assert!(ctx.store.intake().claim_due(Queue::Chat, 10, "w1", LEASE).await.unwrap().is_empty());
        ctx.clock.advance_ms(5_000);
        let due = ctx.store.intake().claim_due(Queue::Chat, 10, "w1", LEASE).await.unwrap();
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].attempts, 2);
    }

    async fn purge_removes_only_expired_finished_rows(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        for id in ["Done", "Failed", "Pending", "Running"] {
            ctx.store.intake().accept(&t, &delivery(id)).await.unwrap();
        }
        ctx.store.intake().finish(&key(&t, "Done")).await.unwrap();
        ctx.store.intake().fail(&key(&t, "Failed"), "bad").await.unwrap();
        ctx.store.intake().claim(&key(&t, "Running"), "w1", TTL * 10).await.unwrap().unwrap();
        assert_eq!(ctx.store.intake().purge_expired(100).await.unwrap(), 0, "nothing expired yet");
        ctx.clock.advance_ms(TTL);
        assert_eq!(ctx.store.intake().purge_expired(1).await.unwrap(), 1, "at most the limit");
        assert_eq!(ctx.store.intake().purge_expired(100).await.unwrap(), 1);
        assert!(ctx.store.intake().get(&key(&t, "Done")).await.unwrap().is_none());
        assert!(ctx.store.intake().get(&key(&t, "Failed")).await.unwrap().is_none());
        assert_eq!(state(&ctx.store, &key(&t, "Pending")).await, IntakeState::Pending);
        assert_eq!(state(&ctx.store, &key(&t, "Running")).await, IntakeState::Running);
        // An unfinished row past its window still answers "seen".
        assert!(!ctx.store.intake().accept(&t, &delivery("Pending")).await.unwrap());
    }

    async fn an_expired_finished_row_is_accepted_again(ctx: Ctx) {
        let t = tenant(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap();
        ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        ctx.store.intake().finish(&k).await.unwrap();
        ctx.clock.advance_ms(TTL - 1);
        assert!(!ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap());
        ctx.clock.advance_ms(1);
        assert!(ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap());
        let row = ctx.store.intake().get(&k).await.unwrap().unwrap();
        assert_eq!((row.state, row.attempts), (IntakeState::Pending, 0));
        assert_eq!(row.payload, serde_json::json!({"text": "hello Ev1"}));
    }

    async fn tenants_do_not_share_deliveries(ctx: Ctx) {
        let a = tenant(&ctx.store, "intake-a").await;
        let b = tenant(&ctx.store, "intake-b").await;
        assert!(ctx.store.intake().accept(&a, &delivery("Ev1")).await.unwrap());
        assert!(ctx.store.intake().accept(&b, &delivery("Ev1")).await.unwrap(), "same id, other tenant");
        ctx.store.intake().claim(&key(&a, "Ev1"), "w1", LEASE).await.unwrap().unwrap();
        ctx.store.intake().finish(&key(&a, "Ev1")).await.unwrap();
        assert_eq!(state(&ctx.store, &key(&a, "Ev1")).await, IntakeState::Done);
        assert_eq!(state(&ctx.store, &key(&b, "Ev1")).await, IntakeState::Pending);
        assert!(ctx.store.intake().claim(&key(&b, "Ev1"), "w1", LEASE).await.unwrap().is_some());
    }

    async fn an_append_marks_its_delivery_done_in_the_same_transaction(ctx: Ctx) {
        let (t, session) = tenant_with_session(&ctx.store, "intake").await;
        let k = key(&t, "Ev1");
        ctx.store.intake().accept(&t, &delivery("Ev1")).await.unwrap();
        ctx.store.intake().claim(&k, "w1", LEASE).await.unwrap().unwrap();
        let user = Message::User {
            content: UserContent::Text("hello Ev1".into()),
            ts: 1,
            author: None,
            display: None,
        };
        let start = || EventKind::TurnStart { input: "hello Ev1".into(), author: None, display: None };

        // The session is missing: nothing is written, and the delivery is not done.
        let missing = SessionId::from("s_missing");
        let failed = ctx.store.events()
            .append_with_messages_marking(&t, &missing, None, std::slice::from_ref(&user), vec![start()], std::slice::from_ref(&k))
            .await;
        assert!(failed.is_err());
        assert_eq!(state(&ctx.store, &k).await, IntakeState::Running);

        // Another tenant's delivery is refused, and the append with it.
        let (other, other_session) = tenant_with_session(&ctx.store, "intake-other").await;
        let foreign = ctx.store.events()
            .append_with_messages_marking(&other, &other_session.id, None, std::slice::from_ref(&user), vec![start()], std::slice::from_ref(&k))
            .await;
        assert!(foreign.is_err());
        assert!(ctx.store.messages().list(&other, &other_session.id).await.unwrap().is_empty());
        assert_eq!(state(&ctx.store, &k).await, IntakeState::Running);

        let events = ctx.store.events()
            .append_with_messages_marking(&t, &session.id, None, std::slice::from_ref(&user), vec![start()], std::slice::from_ref(&k))
            .await
            .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(state(&ctx.store, &k).await, IntakeState::Done);
        assert_eq!(ctx.store.messages().list(&t, &session.id).await.unwrap(), vec![user]);
    }
}
