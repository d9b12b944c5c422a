//! Concurrent writers never collide or leave gaps.

use std::collections::BTreeSet;

use workmate_protocol::{EventKind, InboxItemKind, Resolution, Surface, UserId, Visibility};
use workmate_store::{NewInboxItem, ResolveOutcome};

use crate::support::{session_at, tenant_with_session};

const WRITERS: u64 = 8;
const EVENTS_PER_WRITER: u64 = 1_000;

backend_matrix! {
    async fn concurrent_appenders_get_gapless_sequence_numbers(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "seq").await;
        let mut writers = Vec::new();
        for writer in 0..WRITERS {
            let store = ctx.store.clone();
            let (tenant, session) = (tenant.clone(), session.id.clone());
            writers.push(tokio::spawn(async move {
                let mut seqs = Vec::new();
                for i in 0..EVENTS_PER_WRITER {
                    let kind = EventKind::IterationEnd { iteration: u32::try_from(writer * 10_000 + i).unwrap() };
                    let events = store.events().append(&tenant, &session, None, vec![kind]).await.unwrap();
                    seqs.push(events[0].seq);
                }
                seqs
            }));
        }
        let mut all = Vec::new();
        for writer in writers {
            all.extend(writer.await.unwrap());
        }
        let total = WRITERS * EVENTS_PER_WRITER;
        let unique: BTreeSet<u64> = all.iter().copied().collect();
        assert_eq!(all.len() as u64, total, "every append returned one event");
        assert_eq!(unique.len() as u64, total, "no sequence number was handed out twice");
        assert_eq!(unique.first(), Some(&1));
        assert_eq!(unique.last(), Some(&total), "no gap between 1 and {total}");

        let stored = ctx.store.events().list_after(&tenant, &session.id, 0, 10_000).await.unwrap();
        let stored_seqs: Vec<u64> = stored.iter().map(|e| e.seq).collect();
        assert_eq!(stored_seqs, (1..=total).collect::<Vec<_>>());
        let record = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(record.last_seq, total);
    }

    async fn racing_session_creators_share_one_session(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "race").await;
        let mut racers = Vec::new();
        for _ in 0..8 {
            let store = ctx.store.clone();
            let tenant = tenant.clone();
            racers.push(tokio::spawn(async move { session_at(&store, &tenant, "C_RACE", "t1").await }));
        }
        let mut ids = BTreeSet::new();
        for racer in racers {
            ids.insert(racer.await.unwrap().id);
        }
        assert_eq!(ids.len(), 1, "one key, one session: {ids:?}");
    }

    async fn first_answer_wins_among_racing_resolvers(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "race").await;
        let new = NewInboxItem {
            session_id: session.id.clone(),
            tool_call_id: Some("call_1".into()),
            kind: InboxItemKind::Approval,
            title: "Run `write_file`?".into(),
            body: String::new(),
            inbox: "default".into(),
            visibility: Visibility::Inline,
            requested_by: Some(UserId::from("u_alice")),
            data: serde_json::json!({}),
        };
        let (item, _) = ctx.store.inbox().park(&tenant, &new).await.unwrap();
        let mut resolvers = Vec::new();
        for n in 0..8 {
            let store = ctx.store.clone();
            let (tenant, item) = (tenant.clone(), item.id.clone());
            resolvers.push(tokio::spawn(async move {
                let answer = Resolution::Answer { text: format!("answer {n}") };
                let by = UserId::from(format!("u_{n}"));
                store.inbox().resolve(&tenant, &item, &answer, &by, Surface::Slack).await.unwrap()
            }));
        }
        let mut winners = Vec::new();
        let mut losers = Vec::new();
        for resolver in resolvers {
            match resolver.await.unwrap() {
                ResolveOutcome::Resolved(item) => winners.push(item),
                ResolveOutcome::AlreadyResolved(item) => losers.push(item),
                other => panic!("one approval is enough here: {other:?}"),
            }
        }
        assert_eq!(winners.len(), 1);
        let winner = &winners[0];
        for loser in &losers {
            assert_eq!(loser.resolution, winner.resolution, "later answerers learn the first answer");
            assert_eq!(loser.resolved_by, winner.resolved_by, "and who gave it");
        }
    }
}
