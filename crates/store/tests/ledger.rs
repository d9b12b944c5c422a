//! The tool-call ledger, history and event logs keep what was written, in order.

use workmate_protocol::{
    Actor, EventKind, Message, NoticeKind, TokenUsage, ToolCall, ToolCallId, TurnId, UserContent,
};
use workmate_store::{Error, ToolCallState};

use crate::support::tenant_with_session;

backend_matrix! {
    async fn tool_calls_only_move_forward(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "ledger").await;
        let ledger = ctx.store.tool_calls();
        let turn = TurnId::new();
        let call = ToolCall { id: ToolCallId::from("call_Ab1"), name: "write_file".into(), arguments: serde_json::json!({"path": "a.md", "content": "hi"}) };
        let proposed = ledger.record_proposed(&tenant, &session.id, Some(&turn), &call).await.unwrap();
        assert_eq!(proposed.state, ToolCallState::Proposed);
        assert_eq!(proposed.call, call);

        assert!(!ledger.transition(&tenant, &session.id, &call.id, ToolCallState::Started, None).await.unwrap(), "not approved yet");
        assert!(ledger.transition(&tenant, &session.id, &call.id, ToolCallState::AwaitingApproval, None).await.unwrap());
        assert!(ledger.transition(&tenant, &session.id, &call.id, ToolCallState::Approved, None).await.unwrap());
        assert!(!ledger.transition(&tenant, &session.id, &call.id, ToolCallState::Approved, None).await.unwrap(), "a replayed move changes nothing");
        assert!(ledger.transition(&tenant, &session.id, &call.id, ToolCallState::Started, None).await.unwrap());

        // A restart records the same proposal again: the ledger keeps how far the call got.
        let again = ledger.record_proposed(&tenant, &session.id, Some(&turn), &call).await.unwrap();
        assert_eq!(again.state, ToolCallState::Started);
        let open = ledger.open_calls(&tenant, &session.id).await.unwrap();
        assert_eq!(open.iter().map(|r| &r.call.id).collect::<Vec<_>>(), vec![&call.id]);

        let result = serde_json::json!({"written": 2});
        assert!(ledger.transition(&tenant, &session.id, &call.id, ToolCallState::Finished, Some(&result)).await.unwrap());
        assert!(!ledger.transition(&tenant, &session.id, &call.id, ToolCallState::Interrupted, None).await.unwrap(), "finished is final");
        let done = ledger.get(&tenant, &session.id, &call.id).await.unwrap().unwrap();
        assert_eq!(done.state, ToolCallState::Finished);
        assert_eq!(done.result, Some(result));
        assert_eq!(done.turn_id, Some(turn));
        assert!(ledger.open_calls(&tenant, &session.id).await.unwrap().is_empty());
    }

    async fn tool_call_ids_are_case_sensitive(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "ledger").await;
        let ledger = ctx.store.tool_calls();
        for id in ["call_abc", "call_ABC"] {
            let call = ToolCall { id: ToolCallId::from(id), name: "read_file".into(), arguments: serde_json::json!({}) };
            let row = ledger.record_proposed(&tenant, &session.id, None, &call).await.unwrap();
            assert_eq!(row.call.id.as_str(), id);
        }
        assert_eq!(ledger.open_calls(&tenant, &session.id).await.unwrap().len(), 2);
    }

    async fn history_reads_back_exactly_as_appended(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "history").await;
        let call = ToolCall { id: ToolCallId::from("toolu_01"), name: "grep".into(), arguments: serde_json::json!({"pattern": "TODO", "path": "."}) };
        let history = vec![
            Message::System { content: "You are workmate.".into() },
            Message::User { content: UserContent::Text("找一下 TODO 😀".into()), ts: 1, author: Some(Actor::named("u_alice", "Alice")), display: None },
            Message::Assistant { content: String::new(), ts: 2, tool_calls: vec![call], reasoning: Some("look first".into()), usage: Some(TokenUsage { model: "scripted:demo".into(), input: 10, output: 5, cache_read: 0, cache_write: 0 }), provider_state: Box::default() },
            Message::Tool { tool_call_id: ToolCallId::from("toolu_01"), content: "a.rs:1: TODO".into(), ts: 3, display: Some(serde_json::json!({"hidden_fields": 1})) },
            Message::Notice { kind: NoticeKind::Interrupted, text: Some("Stopped.".into()), ts: 4 },
        ];
        let first = ctx.store.messages().append(&tenant, &session.id, &history[..2]).await.unwrap();
        assert_eq!(first, 1);
        let next = ctx.store.messages().append(&tenant, &session.id, &history[2..]).await.unwrap();
        assert_eq!(next, 3);
        assert_eq!(ctx.store.messages().list(&tenant, &session.id).await.unwrap(), history);
        let record = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!(record.message_count, 5);
    }

    async fn large_bodies_are_stored_whole(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "history").await;
        let big = "x".repeat(300_000);
        let message = Message::User { content: UserContent::Text(big), ts: 1, author: None, display: None };
        ctx.store.messages().append(&tenant, &session.id, std::slice::from_ref(&message)).await.unwrap();
        assert_eq!(ctx.store.messages().list(&tenant, &session.id).await.unwrap(), vec![message]);
    }

    async fn events_replay_in_order_with_their_turn(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "events").await;
        let turn = TurnId::new();
        let kinds = vec![
            EventKind::TurnStart { input: "hi".into(), author: None, display: None },
            EventKind::IterationEnd { iteration: 1 },
            EventKind::Compacting,
        ];
        let appended = ctx.store.events().append(&tenant, &session.id, Some(&turn), kinds.clone()).await.unwrap();
        assert_eq!(appended.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
        let replayed = ctx.store.events().list_after(&tenant, &session.id, 1, 10).await.unwrap();
        assert_eq!(replayed, appended[1..].to_vec());
        assert!(replayed.iter().all(|e| e.turn_id.as_ref() == Some(&turn)));
        assert_eq!(ctx.store.events().list_after(&tenant, &session.id, 0, 2).await.unwrap().len(), 2);
    }

    async fn transport_events_are_never_stored(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "events").await;
        let err = ctx.store.events().append(&tenant, &session.id, None, vec![
            EventKind::Compacting,
            EventKind::AssistantDelta { text: "Hel".into() },
        ]).await.unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains("assistant_delta"), "{err}");
        assert!(ctx.store.events().list_after(&tenant, &session.id, 0, 10).await.unwrap().is_empty(), "nothing half-written");
    }
}

backend_matrix! {
    async fn messages_and_their_event_are_stored_together(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "together").await;
        let reply = Message::Assistant { content: "Done.".into(), ts: 1, tool_calls: vec![], reasoning: None, usage: None, provider_state: Box::default() };
        let announced = EventKind::AssistantMessage { text: Some("Done.".into()), tool_calls: vec![], reasoning: None, usage: None };
        let events = ctx.store.events().append_with_messages(&tenant, &session.id, None, std::slice::from_ref(&reply), vec![announced]).await.unwrap();
        assert_eq!(events[0].seq, 1);
        assert_eq!(ctx.store.messages().list(&tenant, &session.id).await.unwrap(), vec![reply.clone()]);
        let record = ctx.store.sessions().get(&tenant, &session.id).await.unwrap().unwrap();
        assert_eq!((record.last_seq, record.message_count), (1, 1));

        // A refused append writes neither half.
        let err = ctx.store.events().append_with_messages(&tenant, &session.id, None, &[reply], vec![EventKind::AssistantDelta { text: "x".into() }]).await.unwrap_err();
        assert!(matches!(err, Error::Invalid(_)));
        assert_eq!(ctx.store.messages().list(&tenant, &session.id).await.unwrap().len(), 1);
    }
}
