//! Deliveries from the intake: a message's row is done exactly when the message is in history,
//! other commands' rows once applied, and a refused command's row is left for the caller.

use serde_json::json;
use workmate_engine::{Accepted, Error};
use workmate_protocol::{
    ApprovalChoice, Attachment, AttachmentKind, Command, EventKind, Message, PermissionMode,
    Resolution, Surface, UserContent,
};
use workmate_store::{IntakeKey, IntakeState, NewDelivery};

use crate::support::{Harness, script};

const LEASE_MS: i64 = 600_000;

/// Accepts a delivery and claims it, as a worker would before submitting it.
async fn claimed(h: &Harness, id: &str, kind: &str) -> IntakeKey {
    let new = NewDelivery {
        platform: "slack".into(),
        delivery_id: id.into(),
        kind: kind.into(),
        payload: json!({}),
        ttl_ms: 3_600_000,
    };
    assert!(h.store.intake().accept(&h.tenant, &new).await.unwrap());
    let key = IntakeKey {
        tenant_id: h.tenant.clone(),
        platform: "slack".into(),
        delivery_id: id.into(),
    };
    h.store
        .intake()
        .claim(&key, "w1", LEASE_MS)
        .await
        .unwrap()
        .unwrap();
    key
}

async fn state(h: &Harness, key: &IntakeKey) -> IntakeState {
    h.store.intake().get(key).await.unwrap().unwrap().state
}

fn message(text: &str) -> Command {
    Command::UserMessage {
        author: Harness::alice(),
        text: text.into(),
        attachments: vec![],
    }
}

/// The texts of the user messages in the history.
async fn user_texts(h: &Harness) -> Vec<String> {
    h.history()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::User {
                content: UserContent::Text(t),
                ..
            } => Some(t),
            _ => None,
        })
        .collect()
}

async fn deliver(
    h: &Harness,
    command: Command,
    key: &IntakeKey,
) -> workmate_engine::Result<Accepted> {
    h.hub
        .submit_delivery(
            &h.tenant,
            &h.session,
            command,
            key.clone(),
            std::time::Duration::from_secs(15),
        )
        .await
}

#[tokio::test]
async fn a_message_that_starts_a_turn_is_done_when_it_is_in_history() {
    let mut h = Harness::new(&script(json!([{"text": "Hello."}]))).await;
    let key = claimed(&h, "Ev1", "message").await;
    let accepted = deliver(&h, message("hi"), &key).await.unwrap();
    assert!(matches!(accepted, Accepted::TurnStarted(_)));
    // `turn_start` is published when the step storing the message is queued; once the step is
    // stored, so is the delivery's end.
    h.events_until(|e| matches!(e.kind, EventKind::TurnStart { .. }))
        .await;
    h.hub.flushed(&h.tenant, &h.session).await.unwrap();
    assert_eq!(state(&h, &key).await, IntakeState::Done);
    assert_eq!(user_texts(&h).await, vec!["hi"]);
    h.turn_events().await;
    h.idle().await;
    let row = h.store.intake().get(&key).await.unwrap().unwrap();
    assert_eq!((row.state, row.attempts), (IntakeState::Done, 1));
}

#[tokio::test]
async fn a_steering_message_is_done_when_it_is_injected_and_not_before() {
    let mut h = Harness::new(&script(json!([
        {"text": "I'll save it.", "tool_calls": [{"name": "probe_write", "arguments": {"path": "report.md"}}]},
        {"text": "Saved, as Friday's."}
    ])))
    .await;
    h.say("save the report").await;
    let item = h.parked().await;

    // The turn waits on the approval: the message queues as steering and stays unfinished.
    let steer = claimed(&h, "Ev2", "message").await;
    assert_eq!(
        deliver(&h, message("make it Friday's"), &steer)
            .await
            .unwrap(),
        Accepted::Steered
    );
    assert_eq!(state(&h, &steer).await, IntakeState::Running);
    assert_eq!(user_texts(&h).await, vec!["save the report"]);

    // The approval click is a delivery too: done once applied.
    let click = claimed(&h, "Trigger1", "click").await;
    let resolve = Command::ResolveInbox {
        item_id: item,
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
        actor: Harness::alice(),
        via: Surface::Slack,
    };
    let accepted = deliver(&h, resolve, &click).await.unwrap();
    assert!(matches!(accepted, Accepted::Resolved(_)));
    assert_eq!(state(&h, &click).await, IntakeState::Done);

    // The call runs, the steering is injected after its iteration, and only then is it done.
    h.turn_events().await;
    h.idle().await;
    assert_eq!(
        user_texts(&h).await,
        vec!["save the report", "make it Friday's"]
    );
    assert_eq!(state(&h, &steer).await, IntakeState::Done);
    assert!(
        serde_json::to_string(&h.model.requests()[1].messages)
            .unwrap()
            .contains("make it Friday's")
    );
}

#[tokio::test]
async fn messages_that_miss_the_turn_are_done_with_the_next_turn() {
    // The first answer stalls; the turn is stopped with two messages queued behind it.
    let mut h = Harness::new(&script(json!([
        {"text": "a b", "chunk_delay_ms": 3600000},
        {"text": "Both noted."}
    ])))
    .await;
    h.say("go").await;
    h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
        .await;
    let first = claimed(&h, "Ev1", "message").await;
    let second = claimed(&h, "Ev2", "message").await;
    assert_eq!(
        deliver(&h, message("one"), &first).await.unwrap(),
        Accepted::Steered
    );
    assert_eq!(
        deliver(&h, message("two"), &second).await.unwrap(),
        Accepted::Steered
    );
    let stop = Command::Interrupt {
        actor: Harness::alice(),
    };
    h.command(stop).await.unwrap();
    let stopped = h.turn_events().await;
    assert!(matches!(
        stopped.last().unwrap().kind,
        EventKind::Interrupted { .. }
    ));
    // The next turn starts with both, and its first write marks both done.
    h.events_until(|e| matches!(e.kind, EventKind::TurnStart { .. }))
        .await;
    h.hub.flushed(&h.tenant, &h.session).await.unwrap();
    assert_eq!(state(&h, &first).await, IntakeState::Done);
    assert_eq!(state(&h, &second).await, IntakeState::Done);
    assert_eq!(user_texts(&h).await, vec!["go", "one\n\ntwo"]);
    h.turn_events().await;
    h.idle().await;
}

#[tokio::test]
async fn a_refused_message_leaves_its_row_for_the_caller() {
    let mut h = Harness::new(&script(json!([
        {"text": "a b", "chunk_delay_ms": 3600000},
        {"text": "Read it."}
    ])))
    .await;
    h.say("go").await;
    h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
        .await;
    // A message with a file cannot steer, and the session is busy.
    let with_file = || Command::UserMessage {
        author: Harness::alice(),
        text: "read this".into(),
        attachments: vec![Attachment {
            kind: AttachmentKind::Text,
            name: "notes.txt".into(),
            mime: "text/plain".into(),
            data: "notes".into(),
        }],
    };
    let key = claimed(&h, "Ev1", "message").await;
    assert!(matches!(
        deliver(&h, with_file(), &key).await,
        Err(Error::Busy(_))
    ));
    // An empty message is rejected.
    let empty = claimed(&h, "Ev2", "message").await;
    assert!(matches!(
        deliver(&h, message("  "), &empty).await,
        Err(Error::Rejected(_))
    ));
    h.command(Command::Interrupt {
        actor: Harness::alice(),
    })
    .await
    .unwrap();
    h.turn_events().await;
    h.idle().await;
    assert_eq!(state(&h, &key).await, IntakeState::Running);
    assert_eq!(state(&h, &empty).await, IntakeState::Running);

    // Once the session is idle, the same delivery starts a turn and is done.
    assert!(matches!(
        deliver(&h, with_file(), &key).await.unwrap(),
        Accepted::TurnStarted(_)
    ));
    h.turn_events().await;
    h.idle().await;
    assert_eq!(state(&h, &key).await, IntakeState::Done);
    assert_eq!(state(&h, &empty).await, IntakeState::Running);
}

#[tokio::test]
async fn other_commands_are_done_once_applied() {
    let h = Harness::new(&script(json!([{"text": "Hello."}]))).await;
    let key = claimed(&h, "Cmd1", "command").await;
    let set_mode = Command::SetMode {
        mode: PermissionMode::Plan,
        actor: Harness::alice(),
    };
    assert_eq!(
        deliver(&h, set_mode, &key).await.unwrap(),
        Accepted::Updated
    );
    assert_eq!(state(&h, &key).await, IntakeState::Done);

    // A refused command (nothing to retry) is left alone.
    let retry = claimed(&h, "Cmd2", "command").await;
    let refused = deliver(
        &h,
        Command::Retry {
            actor: Harness::alice(),
        },
        &retry,
    )
    .await;
    assert!(matches!(refused, Err(Error::Rejected(_))));
    assert_eq!(state(&h, &retry).await, IntakeState::Running);

    // Another tenant's delivery is refused before anything is applied.
    let mut foreign = claimed(&h, "Cmd3", "command").await;
    foreign.tenant_id = "t_other".into();
    let set_auto = Command::SetMode {
        mode: PermissionMode::Auto,
        actor: Harness::alice(),
    };
    assert!(matches!(
        deliver(&h, set_auto, &foreign).await,
        Err(Error::Rejected(_))
    ));
    let session = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.mode, PermissionMode::Plan);
}
