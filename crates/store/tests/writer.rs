//! The group-commit writer: many sessions' steps in one transaction, fenced by the session's
//! counters, each step whole or not at all.

use workmate_protocol::{
    Event, EventKind, Message, NoticeKind, SessionId, TenantId, ToolCall, ToolCallId, TurnId,
};
use workmate_store::{Counters, LedgerMove, NewAuditRecord, StepError, StepWrite, ToolCallState};

use crate::support::{session_at, tenant_with_session, write_steps};

/// A step of `session` after `base`, with `n` notices and as many state events.
fn step(tenant: &TenantId, session: &SessionId, base: Counters, n: usize) -> StepWrite {
    let mut step = StepWrite::new(tenant.clone(), session.clone(), Some(TurnId::new()));
    step.base = base;
    for i in 0..n {
        step.messages.push(Message::Notice {
            kind: NoticeKind::Compacted,
            text: Some(format!("note {i}")),
            ts: 1,
        });
        step.events.push(Event {
            tenant_id: tenant.clone(),
            session_id: session.clone(),
            seq: base.last_seq + i as u64 + 1,
            turn_id: step.turn.clone(),
            at_ms: 1,
            kind: EventKind::IterationEnd {
                iteration: i as u32,
            },
        });
    }
    step
}

backend_matrix! {
    async fn steps_of_many_sessions_are_stored_in_order(ctx: Ctx) {
        let (tenant, first) = tenant_with_session(&ctx.store, "writer").await;
        let second = session_at(&ctx.store, &tenant, "C02", "1700000000.000200").await;
        let mut steps = Vec::new();
        let (mut a, mut b) = (Counters::default(), Counters::default());
        for _ in 0..20 {
            let next = step(&tenant, &first.id, a, 2);
            a = next.end();
            steps.push(next);
            let next = step(&tenant, &second.id, b, 1);
            b = next.end();
            steps.push(next);
        }
        let outcomes = write_steps(&ctx.store, steps).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        let events = ctx.store.events().list_after(&tenant, &first.id, 0, 1000).await.unwrap();
        assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), (1..=40).collect::<Vec<_>>());
        assert_eq!(ctx.store.messages().list(&tenant, &second.id).await.unwrap().len(), 20);
        let record = ctx.store.sessions().get(&tenant, &first.id).await.unwrap().unwrap();
        assert_eq!((record.last_seq, record.message_count), (40, 40));
    }

    async fn a_step_that_does_not_follow_the_stored_counters_is_fenced(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "writer").await;
        let first = step(&tenant, &session.id, Counters::default(), 1);
        let after = first.end();
        assert!(write_steps(&ctx.store, vec![first]).await[0].is_ok());
        // A second writer that still thinks the session is empty is refused, and so is every
        // later step it queued, even one whose counters happen to match the store's; the
        // session keeps what the first writer stored.
        let mut stale = step(&tenant, &session.id, Counters::default(), 1);
        stale.lineage = 2;
        let mut later = step(&tenant, &session.id, stale.end(), 1);
        later.lineage = 2;
        for refused in [stale, later] {
            let outcome = write_steps(&ctx.store, vec![refused]).await.remove(0);
            assert!(matches!(outcome, Err(StepError::Fenced { .. })), "{outcome:?}");
        }
        let record = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(record.counters(), after);
        // A writer that reloaded the session (a new lineage) writes on.
        let mut reloaded = step(&tenant, &session.id, record.counters(), 1);
        reloaded.lineage = 3;
        assert!(write_steps(&ctx.store, vec![reloaded]).await[0].is_ok());
    }

    async fn one_bad_step_fails_alone(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "writer").await;
        let other = session_at(&ctx.store, &tenant, "C09", "1700000000.000900").await;
        // The bad step names a session that does not exist: its fence finds no row.
        let ghost = step(&tenant, &SessionId::from("s_ghost"), Counters::default(), 1);
        // A step that marks a delivery of another tenant done is refused by the store.
        let mut foreign = step(&tenant, &other.id, Counters::default(), 1);
        foreign.done.push(workmate_store::IntakeKey {
            tenant_id: TenantId::from("someone-else"),
            platform: "slack".into(),
            delivery_id: "Ev1".into(),
        });
        let good = step(&tenant, &session.id, Counters::default(), 1);
        let mut audited = step(&tenant, &session.id, good.end(), 0);
        audited.audit.push(NewAuditRecord {
            session_id: Some(session.id.clone()),
            actor: Some("u_alice".into()),
            stage: "decided".into(),
            tool: Some("run_shell".into()),
            status: Some("allowed".into()),
            detail: serde_json::json!({"why": "test"}),
        });
        let outcomes = write_steps(&ctx.store, vec![ghost, foreign, good, audited]).await;
        assert!(matches!(outcomes[0], Err(StepError::Fenced { .. })), "{:?}", outcomes[0]);
        assert!(matches!(outcomes[1], Err(StepError::Failed(_))), "{:?}", outcomes[1]);
        assert!(outcomes[2].is_ok() && outcomes[3].is_ok(), "{outcomes:?}");
        assert_eq!(ctx.store.messages().list(&tenant, &session.id).await.unwrap().len(), 1);
        assert!(ctx.store.messages().list(&tenant, &other.id).await.unwrap().is_empty(), "the failed step left nothing");
        assert_eq!(ctx.store.audit().recent(&tenant, 10).await.unwrap().len(), 1);
    }

    async fn ledger_moves_report_whether_the_call_moved(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "writer").await;
        let call = ToolCall { id: ToolCallId::from("call_1"), name: "run_shell".into(), arguments: serde_json::json!({"command": "ls"}) };
        let mut proposed = step(&tenant, &session.id, Counters::default(), 1);
        proposed.proposed.push(call.clone());
        let mv = |to| LedgerMove { call: call.id.clone(), to, result: None };
        let mut approved = step(&tenant, &session.id, proposed.end(), 0);
        approved.moves = vec![mv(ToolCallState::Approved), mv(ToolCallState::Approved), mv(ToolCallState::Started)];
        let outcomes = write_steps(&ctx.store, vec![proposed, approved]).await;
        assert_eq!(outcomes[1].as_ref().unwrap().moved, vec![true, false, true]);
        let row = ctx.store.tool_calls().get(&tenant, &session.id, &call.id).await.unwrap().unwrap();
        assert_eq!(row.state, ToolCallState::Started);
    }
}

backend_matrix! {
    async fn a_lease_has_one_holder_and_fences_the_one_who_lost_it(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "lease").await;
        let leases = ctx.store.leases();
        let now = ctx.store.clock_ms();
        let a = leases.take(&tenant, &session.id, "a", now + 30_000).await.unwrap().unwrap();
        assert_eq!(leases.take(&tenant, &session.id, "b", now + 30_000).await.unwrap(), None, "a's lease is live");
        assert_eq!(leases.take(&tenant, &session.id, "a", now + 60_000).await.unwrap(), Some(a), "renewing keeps the token");
        let mut first = step(&tenant, &session.id, Counters::default(), 1);
        first.lease = a;
        let after = first.end();
        assert!(write_steps(&ctx.store, vec![first]).await[0].is_ok());
        // a stalls past its lease; b takes the session over.
        ctx.clock.advance_ms(61_000);
        let b = leases.take(&tenant, &session.id, "b", ctx.store.clock_ms() + 30_000).await.unwrap().unwrap();
        assert!(b > a);
        let mut late = step(&tenant, &session.id, after, 1);
        late.lease = a;
        late.lineage = 7;
        assert!(matches!(write_steps(&ctx.store, vec![late]).await[0], Err(StepError::Fenced { .. })), "a's write after losing the lease is refused");
        let mut next = step(&tenant, &session.id, after, 1);
        next.lease = b;
        next.lineage = 8;
        assert!(write_steps(&ctx.store, vec![next]).await[0].is_ok());
        leases.release(&tenant, &session.id, "b").await.unwrap();
        assert!(leases.take(&tenant, &session.id, "a", ctx.store.clock_ms() + 30_000).await.unwrap().is_some(), "a released lease is free");
    }

    async fn a_turn_stays_open_from_its_start_until_an_event_ends_it(ctx: Ctx) {
        let (tenant, first) = tenant_with_session(&ctx.store, "writer").await;
        let second = session_at(&ctx.store, &tenant, "C02", "1700000000.000200").await;
        let with = |mut step: StepWrite, kind: EventKind| {
            let seq = step.base.last_seq + step.events.len() as u64 + 1;
            step.events.push(Event {
                tenant_id: step.tenant.clone(),
                session_id: step.session.clone(),
                seq,
                turn_id: step.turn.clone(),
                at_ms: 1,
                kind,
            });
            step
        };
        let start = || EventKind::TurnStart { input: "hi".into(), author: None, display: None };
        // Both sessions start a turn in one batch; the first also ends it in a later step.
        let a = with(step(&tenant, &first.id, Counters::default(), 0), start());
        let a_turn = a.turn.clone().unwrap();
        let ended = with(
            step(&tenant, &first.id, a.end(), 1),
            EventKind::TurnEnd { status: workmate_protocol::TurnEndStatus::Completed, iterations: 1 },
        );
        let b = with(step(&tenant, &second.id, Counters::default(), 1), start());
        let b_turn = b.turn.clone().unwrap();
        let outcomes = write_steps(&ctx.store, vec![a, b, ended]).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");

        let turns = ctx.store.open_turns();
        assert_eq!(turns.get(&tenant, &first.id).await.unwrap(), None);
        let open = turns.get(&tenant, &second.id).await.unwrap().unwrap();
        assert_eq!(open.turn, b_turn);
        // Nobody holds the session's lease: any process may take the open turn over.
        let takeable = turns.takeable("replica-b", ctx.store.clock_ms(), 100).await.unwrap();
        assert!(takeable.iter().any(|t| t.session == second.id), "{takeable:?}");
        assert!(takeable.iter().all(|t| t.turn != a_turn), "{takeable:?}");
        // A live lease of another process keeps it out of reach, not from its holder.
        let until = ctx.store.clock_ms() + 60_000;
        ctx.store.leases().take(&tenant, &second.id, "replica-a", until).await.unwrap().unwrap();
        let takeable = turns.takeable("replica-b", ctx.store.clock_ms(), 100).await.unwrap();
        assert!(takeable.iter().all(|t| t.session != second.id), "{takeable:?}");
        let takeable = turns.takeable("replica-a", ctx.store.clock_ms(), 100).await.unwrap();
        assert!(takeable.iter().any(|t| t.session == second.id), "{takeable:?}");
        // Lapsed: only once the lease ran out, whoever held it.
        let lapsed = turns.lapsed(ctx.store.clock_ms(), 100).await.unwrap();
        assert!(lapsed.iter().all(|t| t.session != second.id), "{lapsed:?}");
        let lapsed = turns.lapsed(until + 1, 100).await.unwrap();
        assert!(lapsed.iter().any(|t| t.session == second.id), "{lapsed:?}");
    }

    async fn a_session_created_under_a_lease_fences_like_a_taken_one(ctx: Ctx) {
        let (tenant, existing) = tenant_with_session(&ctx.store, "lease").await;
        let sessions = ctx.store.sessions();
        let leases = ctx.store.leases();
        let mut new = workmate_store::NewSession {
            key: workmate_store::SessionKey { surface: workmate_protocol::Surface::Slack, chat_id: "C01".into(), thread_id: "1700000000.000200".into() },
            owner: workmate_protocol::UserId::from("u_alice"),
            title: None,
            persona: "cowork".into(),
            model: "scripted:demo".into(),
            mode: workmate_protocol::PermissionMode::Interactive,
            unattended: false,
        };
        let now = ctx.store.clock_ms();
        let (record, a) = sessions.create_leased(&tenant, &new, "a", now + 30_000).await.unwrap().unwrap();
        assert_eq!(sessions.get(&tenant, &record.id).await.unwrap().as_ref(), Some(&record), "the record returned is the row written");
        assert_eq!(sessions.create_leased(&tenant, &new, "b", now + 30_000).await.unwrap(), None, "the key is taken");
        new.key = existing.key.clone();
        assert_eq!(sessions.create_leased(&tenant, &new, "b", now + 30_000).await.unwrap(), None, "so is an older session's");
        assert_eq!(leases.take(&tenant, &record.id, "b", now + 30_000).await.unwrap(), None, "a holds it from the start");
        assert_eq!(leases.take(&tenant, &record.id, "a", now + 60_000).await.unwrap(), Some(a), "renewing keeps the token");
        let mut first = step(&tenant, &record.id, Counters::default(), 1);
        first.lease = a;
        let after = first.end();
        assert!(write_steps(&ctx.store, vec![first]).await[0].is_ok(), "the creator writes under its token");
        ctx.clock.advance_ms(61_000);
        let b = leases.take(&tenant, &record.id, "b", ctx.store.clock_ms() + 30_000).await.unwrap().unwrap();
        assert!(b > a);
        let mut late = step(&tenant, &record.id, after, 1);
        late.lease = a;
        late.lineage = 7;
        assert!(matches!(write_steps(&ctx.store, vec![late]).await[0], Err(StepError::Fenced { .. })), "the creator's write after losing the lease is refused");
    }
}

backend_matrix! {
    async fn a_steps_compaction_view_is_stored_with_the_session_and_replaced_by_the_next(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "writer").await;
        let view = |boundary: u64| workmate_protocol::CompactionView {
            boundary,
            summary: format!("<compacted-history>up to {boundary} — 摘要</compacted-history>"),
            trimmed: boundary > 2,
            messages_at: boundary + 1,
            at_ms: 7,
        };
        let mut first = step(&tenant, &session.id, Counters::default(), 1);
        first.change.compaction = Some(view(2));
        let mut second = step(&tenant, &session.id, first.end(), 1);
        let mut unchanged = step(&tenant, &session.id, Counters::default(), 0);
        unchanged.change.mode = Some(workmate_protocol::PermissionMode::Plan);
        second.change.compaction = Some(view(5));
        let outcomes = write_steps(&ctx.store, vec![first]).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        let stored = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(stored.compaction, Some(view(2)));
        let outcomes = write_steps(&ctx.store, vec![second]).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        let stored = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(stored.compaction, Some(view(5)), "the newer view replaces the older");
        unchanged.base = stored.counters();
        let outcomes = write_steps(&ctx.store, vec![unchanged]).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        let stored = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(stored.compaction, Some(view(5)), "a step without a view keeps the one there is");
    }
}
