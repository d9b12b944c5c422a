//! The memory switch: with saving on, a saved memory is announced in the thread by a notice the
//! model never sees; with it off, `remember` refuses and nothing is saved or announced.

use serde_json::json;
use workmate_protocol::{EventKind, Message, NoticeKind};

use crate::support::{Harness, Options, script};

fn rememberer() -> String {
    script(json!([
        {"tool_calls": [{"name": "remember", "arguments": {"content": "Deploys happen on Tuesdays", "scope": "global"}}]},
        {"text": "Noted."},
        {"tool_calls": [{"name": "remember", "arguments": {"content": "Alice prefers short answers", "scope": "global"}}]},
        {"text": "Not saved."}
    ]))
}

#[tokio::test]
async fn a_save_is_announced_and_a_switched_off_person_saves_nothing() {
    let options = Options {
        allow_all: true,
        ..Options::default()
    };
    let mut h = Harness::with(&rememberer(), options).await;
    h.say("remember that deploys happen on Tuesdays").await;
    let events = h.turn_events().await;
    let saved: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::MemorySaved { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(saved, ["Saved to memory: Deploys happen on Tuesdays"]);

    h.store
        .memories()
        .set_saving(&h.tenant, &"u_alice".into(), false)
        .await
        .unwrap();
    h.say("and that I prefer short answers").await;
    let events = h.turn_events().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::MemorySaved { .. }))
    );
    h.idle().await;
    let memories = h.store.memories().list(&h.tenant).await.unwrap();
    assert_eq!(memories.len(), 1, "{memories:?}");
    let history = h.history().await;
    let refusal = history
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .nth(1)
        .unwrap();
    assert!(
        refusal.contains("\"saved\":false") && refusal.contains("turned off"),
        "{refusal}"
    );
    // The notice is kept in the history for people, and never sent to the model.
    assert!(history.iter().any(|m| matches!(
        m,
        Message::Notice {
            kind: NoticeKind::MemorySaved,
            ..
        }
    )));
    let requests: Vec<_> = h.model.requests().into_iter().map(|r| r.messages).collect();
    let sent = serde_json::to_string(&requests).unwrap();
    assert!(
        !sent.contains("Saved to memory"),
        "the model never sees the notice"
    );
    h.store
        .memories()
        .set_saving(&h.tenant, &"u_alice".into(), true)
        .await
        .unwrap();
    assert!(
        h.store
            .memories()
            .saving_on(&h.tenant, &"u_alice".into())
            .await
            .unwrap()
    );
}
