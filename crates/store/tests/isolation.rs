//! A read with tenant A never returns tenant B's rows, and a write with A never touches B's.

use workmate_protocol::{
    ApprovalChoice, EventKind, InboxItemKind, Message, Resolution, Surface, UserContent, UserId,
    Visibility,
};
use workmate_store::{Error, InboxFilter, NewInboxItem, ResolveOutcome};

use crate::support::tenant_with_session;

backend_matrix! {
    async fn tenants_never_see_each_others_rows(ctx: Ctx) {
        let store = &ctx.store;
        // Both tenants have a session at the very same Slack thread.
        let (a, a_session) = tenant_with_session(store, "a").await;
        let (b, b_session) = tenant_with_session(store, "b").await;
        assert_ne!(a_session.id, b_session.id);

        store.events().append(&a, &a_session.id, None, vec![EventKind::Compacted { text: "a".into() }]).await.unwrap();
        let hello = Message::User { content: UserContent::Text("secret plan".into()), ts: 1, author: None, display: None };
        store.messages().append(&a, &a_session.id, &[hello]).await.unwrap();
        let (a_item, _) = store.inbox().park(&a, &approval(&a_session.id)).await.unwrap();

        // Reads through tenant B, with A's ids.
        assert_eq!(store.sessions().get(&b, &a_session.id).await.unwrap(), None);
        assert!(store.sessions().list(&b, 100).await.unwrap().iter().all(|s| s.tenant_id == b));
        assert_eq!(store.sessions().list(&b, 100).await.unwrap().len(), 1);
        assert!(store.events().list_after(&b, &a_session.id, 0, 100).await.unwrap().is_empty());
        assert!(store.messages().list(&b, &a_session.id).await.unwrap().is_empty());
        assert_eq!(store.inbox().get(&b, &a_item.id).await.unwrap(), None);
        let everything = InboxFilter::default();
        assert!(store.inbox().list(&b, &everything, 100).await.unwrap().is_empty());
        let a_filter = InboxFilter { session: Some(a_session.id.clone()), ..InboxFilter::default() };
        assert!(store.inbox().list(&b, &a_filter, 100).await.unwrap().is_empty());

        // Writes through tenant B, with A's ids, change nothing of A's.
        let err = store.events().append(&b, &a_session.id, None, vec![EventKind::Compacting]).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
        let err = store.messages().append(&b, &a_session.id, &[]).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
        let deny = Resolution::Approval { choice: ApprovalChoice::Deny };
        let outcome = store.inbox().resolve(&b, &a_item.id, &deny, &UserId::from("u_mallory"), Surface::Http).await.unwrap();
        assert_eq!(outcome, ResolveOutcome::NotFound);

        // A still sees exactly its own.
        assert_eq!(store.events().list_after(&a, &a_session.id, 0, 100).await.unwrap().len(), 1);
        assert_eq!(store.messages().list(&a, &a_session.id).await.unwrap().len(), 1);
        let pending = store.inbox().get(&a, &a_item.id).await.unwrap().unwrap();
        assert_eq!(pending.resolution, None, "B's resolve attempt changed nothing");
        assert!(store.sessions().list(&a, 100).await.unwrap().iter().all(|s| s.tenant_id == a));
    }
}

fn approval(session: &workmate_protocol::SessionId) -> NewInboxItem {
    NewInboxItem {
        session_id: session.clone(),
        tool_call_id: Some("call_a".into()),
        kind: InboxItemKind::Approval,
        title: "Run `run_shell`?".into(),
        body: "command: rm -rf build".into(),
        inbox: "default".into(),
        visibility: Visibility::Inbox,
        requested_by: Some(UserId::from("u_alice")),
        data: serde_json::json!({"tool": "run_shell", "arguments": {"command": "rm -rf build"}}),
    }
}
