//! Idle sessions cost nothing resident: the live state a subscription, an answer, a mode change
//! or a resume created is dropped once unused for the idle time, and loaded again on the next use.

use std::time::Duration;

use workmate_protocol::{Actor, ApprovalChoice, Command, EventKind, PermissionMode, Surface};
use workmate_store::{NewSession, SessionKey};

use crate::support::{Harness, Options, script};

fn new_session(i: usize) -> NewSession {
    NewSession {
        key: SessionKey {
            surface: Surface::Http,
            chat_id: format!("idle-{i}-{}", uuid::Uuid::now_v7()),
            thread_id: String::new(),
        },
        owner: "u_alice".into(),
        title: None,
        persona: "cowork".into(),
        model: "scripted:test".into(),
        mode: PermissionMode::Interactive,
        unattended: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_subscribed_answered_switched_and_resumed_leave_nothing_live_once_idle() {
    let writes = script(serde_json::json!([
        {"text": "Saving.", "tool_calls": [{"name": "probe_write", "arguments": {"path": "r.md"}}]},
        {"text": "Saved."}
    ]));
    let mut h = Harness::with(&writes, Options::default()).await;
    // One session through a prompt and its answer.
    h.say("write it").await;
    let item = h.parked().await;
    h.decide(&item, ApprovalChoice::Once).await;
    h.turn_events().await;
    h.idle().await;
    // A few hundred more: subscribed to (and left), switched to plan mode, resumed.
    for i in 0..300 {
        let record = h
            .hub
            .create_session(&h.tenant, &new_session(i))
            .await
            .unwrap();
        drop(h.hub.subscribe(&h.tenant, &record.id).await.unwrap());
        let mode = Command::SetMode {
            mode: PermissionMode::Plan,
            actor: Actor::new("u_alice"),
        };
        h.hub.submit(&h.tenant, &record.id, mode).await.unwrap();
        assert!(
            !h.hub
                .resume_if_pending(&h.tenant, &record.id)
                .await
                .unwrap()
        );
    }
    drop(std::mem::replace(
        &mut h.events,
        tokio::sync::broadcast::channel(1).1,
    ));
    let live = h.hub.live_sessions();
    assert!(live >= 300, "each use loaded a session: {live}");
    assert_eq!(
        h.hub.evict_idle(),
        0,
        "nothing is idle for the default two minutes yet"
    );

    // Past the idle time every one is dropped; nothing is lost: the next use loads it again.
    let dropped = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            h.hub.evict_idle_for(Duration::ZERO);
            if h.hub.live_sessions() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(dropped.is_ok(), "still live: {}", h.hub.live_sessions());
    let events = h.hub.subscribe(&h.tenant, &h.session).await.unwrap();
    drop(events);
    assert_eq!(h.hub.live_sessions(), 1, "loaded again on demand");
    let stored = h
        .store
        .events()
        .list_after(&h.tenant, &h.session, 0, 100)
        .await
        .unwrap();
    assert!(
        stored
            .iter()
            .any(|e| matches!(e.kind, EventKind::TurnEnd { .. })),
        "the dropped state was in the store"
    );
}
