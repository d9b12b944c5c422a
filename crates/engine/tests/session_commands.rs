//! Steering, model switches and mode changes.

use serde_json::json;
use workmate_engine::{Accepted, Error};
use workmate_protocol::{
    Actor, Command, EventKind, Message, NoticeKind, PermissionMode, UserContent,
};

use crate::support::{Harness, script};

#[tokio::test]
async fn a_message_for_a_busy_session_steers_the_running_turn() {
    let mut h = Harness::new(&script(json!([
        {"text": "Working on it slowly", "chunk_delay_ms": 150},
        {"text": "Switched to Friday."}
    ])))
    .await;
    h.say("write Monday's report").await;
    h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
        .await;
    assert_eq!(h.say("actually make it Friday").await, Accepted::Steered);
    let events = h.turn_events().await;
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::AssistantMessage { .. }))
            .count(),
        2,
        "one turn, two model calls"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::TurnStart { .. }))
            .count(),
        0,
        "no second turn"
    );
    h.idle().await;
    let history = h.history().await;
    let texts: Vec<String> = history
        .iter()
        .filter_map(|m| match m {
            Message::User {
                content: UserContent::Text(t),
                ..
            } => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        vec!["write Monday's report", "actually make it Friday"]
    );
    let requests = h.model.requests();
    assert!(
        serde_json::to_string(&requests[1].messages)
            .unwrap()
            .contains("actually make it Friday")
    );
}

#[tokio::test]
async fn switching_models_leaves_a_notice_and_is_refused_mid_turn() {
    let mut h = Harness::new(&script(
        // The second answer streams word by word, so the turn is still going after its first
        // delta whatever the machine's load.
        json!([{"text": "one"}, {"text": "two three four five", "chunk_delay_ms": 300}]),
    ))
    .await;
    let switch = |model: &str| Command::SwitchModel {
        model: model.into(),
        actor: Actor::new("u_alice"),
    };
    // Before any conversation the switch is silent.
    h.command(switch("scripted:first")).await.unwrap();
    assert!(h.history().await.is_empty());
    h.say("hi").await;
    h.turn_events().await;
    h.idle().await;
    h.command(switch("scripted:text-only")).await.unwrap();
    let event = h
        .events_until(|e| matches!(e.kind, EventKind::ModelSwitched { .. }))
        .await
        .pop()
        .unwrap();
    let EventKind::ModelSwitched { text, to, .. } = event.kind else {
        unreachable!()
    };
    assert_eq!(
        (text.as_str(), to.as_str()),
        ("Model switched to scripted:text-only", "scripted:text-only")
    );
    assert!(matches!(
        h.history().await.last().unwrap(),
        Message::Notice {
            kind: NoticeKind::ModelSwitch,
            ..
        }
    ));

    h.say("again").await;
    h.events_until(|e| matches!(e.kind, EventKind::AssistantDelta { .. }))
        .await;
    let busy = h.command(switch("scripted:other")).await.unwrap_err();
    assert!(matches!(busy, Error::Busy(_)), "{busy}");
    h.turn_events().await;
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.model, "scripted:text-only");
    assert_eq!(h.model.requests().last().unwrap().model, "text-only");
}

#[tokio::test]
async fn changing_the_mode_is_announced() {
    let mut h = Harness::new(&script(json!([]))).await;
    h.command(Command::SetMode {
        mode: PermissionMode::Plan,
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    let event = h
        .events_until(|e| matches!(e.kind, EventKind::ModeChanged { .. }))
        .await
        .pop()
        .unwrap();
    assert!(matches!(
        event.kind,
        EventKind::ModeChanged {
            from: PermissionMode::Interactive,
            to: PermissionMode::Plan,
            ..
        }
    ));
    assert_eq!(
        h.store
            .sessions()
            .get(&h.tenant, &h.session)
            .await
            .unwrap()
            .unwrap()
            .mode,
        PermissionMode::Plan
    );
}

#[tokio::test]
async fn an_exhausted_script_is_an_error_turn() {
    let mut h = Harness::new(&script(json!([]))).await;
    h.say("hi").await;
    let events = h.turn_events().await;
    assert!(
        matches!(&events.last().unwrap().kind, EventKind::Error { error, .. } if error == "script exhausted")
    );
}

#[tokio::test]
async fn images_reach_only_models_that_can_see_them() {
    let mut h = Harness::new(&script(
        json!([{"text": "A chart."}, {"text": "Still a chart."}]),
    ))
    .await;
    let image = workmate_protocol::Attachment {
        kind: workmate_protocol::AttachmentKind::Image,
        name: "chart.png".into(),
        mime: "image/png".into(),
        data: "data:image/png;base64,iVBORw0KGgo=".into(),
    };
    let message = |text: &str| Command::UserMessage {
        author: Harness::alice(),
        text: text.into(),
        attachments: vec![image.clone()],
    };
    h.command(message("what is this?")).await.unwrap();
    h.turn_events().await;
    h.idle().await;
    h.command(Command::SwitchModel {
        model: "scripted:text-only".into(),
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    let switched = h
        .events_until(|e| matches!(e.kind, EventKind::ModelSwitched { .. }))
        .await
        .pop()
        .unwrap();
    let EventKind::ModelSwitched { text, .. } = switched.kind else {
        unreachable!()
    };
    assert_eq!(
        text,
        "Model switched to scripted:text-only — earlier images can't be read by this model"
    );
    h.say("and now?").await;
    h.turn_events().await;
    let requests = h.model.requests();
    let first = serde_json::to_string(&requests[0].messages).unwrap();
    let second = serde_json::to_string(&requests[1].messages).unwrap();
    assert!(
        first.contains("iVBORw0KGgo="),
        "a seeing model gets the image"
    );
    assert!(
        !second.contains("iVBORw0KGgo=") && second.contains("not viewable by this model"),
        "{second}"
    );
    // The stored history keeps the image for a later model that can see.
    assert!(
        serde_json::to_string(&h.history().await)
            .unwrap()
            .contains("iVBORw0KGgo=")
    );

    let bad = workmate_protocol::Attachment {
        data: "not a data url".into(),
        ..image.clone()
    };
    let refused = h
        .command(Command::UserMessage {
            author: Harness::alice(),
            text: "x".into(),
            attachments: vec![bad],
        })
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("data URL"), "{refused}");
}

/// Makes `id` a tenant user with `role`.
async fn add_user(h: &Harness, id: &str, role: workmate_store::Role) {
    let user = workmate_store::NewUser {
        id: id.into(),
        display_name: id.into(),
        email: None,
        role,
        sso_subject: None,
    };
    h.store
        .tenants()
        .upsert_user(&h.tenant, &user)
        .await
        .unwrap();
}

#[tokio::test]
async fn only_the_owner_or_an_admin_acts_on_a_session() {
    let h = Harness::new(&script(json!([{"text": "hi"}, {"text": "hello admin"}]))).await;
    add_user(&h, "u_dana", workmate_store::Role::Admin).await;
    let bob = Actor::new("u_bob");
    let refused = [
        Command::UserMessage {
            author: bob.clone(),
            text: "run rm -rf".into(),
            attachments: vec![],
        },
        Command::Interrupt { actor: bob.clone() },
        Command::SwitchModel {
            model: "scripted:other".into(),
            actor: bob.clone(),
        },
        Command::SetMode {
            mode: PermissionMode::Plan,
            actor: bob.clone(),
        },
    ];
    for command in refused {
        let name = command.name();
        let Err(Error::Forbidden(reason)) = h.command(command).await else {
            panic!("{name} from an approver who is not the owner must be refused");
        };
        assert!(
            reason.contains("(who started it) or a tenant admin"),
            "{reason}"
        );
    }
    assert!(h.history().await.is_empty(), "nothing changed");
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.mode, PermissionMode::Interactive);
    // The owner and an admin may.
    h.say("hello").await;
    h.idle().await;
    let admin = Command::UserMessage {
        author: Actor::new("u_dana"),
        text: "hello from an admin".into(),
        attachments: vec![],
    };
    assert!(matches!(
        h.command(admin).await,
        Ok(Accepted::TurnStarted(_))
    ));
    h.idle().await;
    let set = Command::SetMode {
        mode: PermissionMode::Auto,
        actor: Actor::new("u_dana"),
    };
    assert_eq!(h.command(set).await.unwrap(), Accepted::Updated);
}

#[tokio::test]
async fn members_choose_only_the_modes_the_tenant_allows() {
    let h = Harness::new(&script(json!([]))).await;
    let set = |mode| Command::SetMode {
        mode,
        actor: Harness::alice(),
    };
    let Err(Error::Forbidden(reason)) = h.command(set(PermissionMode::Auto)).await else {
        panic!("auto is not among the default modes_allowed");
    };
    assert!(
        reason.contains("modes_allowed") && reason.contains("discuss, plan, interactive"),
        "{reason}"
    );
    assert_eq!(
        h.command(set(PermissionMode::Plan)).await.unwrap(),
        Accepted::Updated
    );
    let changes = json!({"modes_allowed": ["interactive", "auto"]});
    workmate_engine::tenant_settings::update(
        &h.store,
        &h.tenant,
        &"u_admin".into(),
        changes.as_object().unwrap(),
        "http",
    )
    .await
    .unwrap();
    assert_eq!(
        h.command(set(PermissionMode::Auto)).await.unwrap(),
        Accepted::Updated
    );
    assert!(matches!(
        h.command(set(PermissionMode::Plan)).await,
        Err(Error::Forbidden(_))
    ));
    assert!(
        workmate_engine::check_mode(
            &h.store,
            &h.tenant,
            &"u_alice".into(),
            PermissionMode::Custom
        )
        .await
        .is_err()
    );
}

#[tokio::test]
async fn a_pdfs_text_reaches_a_model_that_cannot_read_pdfs() {
    use base64::Engine as _;
    let mut h = Harness::new(&script(json!([{"text": "Revenue grew 12%."}]))).await;
    h.command(Command::SwitchModel {
        model: "scripted:text-only".into(),
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    let pdf = include_bytes!("fixtures/q3-revenue.pdf");
    let attachment = workmate_protocol::Attachment {
        kind: workmate_protocol::AttachmentKind::Pdf,
        name: "q3.pdf".into(),
        mime: "application/pdf".into(),
        data: format!(
            "data:application/pdf;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(pdf)
        ),
    };
    h.command(Command::UserMessage {
        author: Harness::alice(),
        text: "what does the report say?".into(),
        attachments: vec![attachment],
    })
    .await
    .unwrap();
    h.turn_events().await;
    let sent = serde_json::to_string(&h.model.requests()[0].messages).unwrap();
    assert!(
        sent.contains("[Text extracted by workmate from the PDF attachment q3.pdf")
            && sent.contains("Q3 revenue grew 12 percent to 4.2 million"),
        "{sent}"
    );
    assert!(
        !sent.contains("JVBER"),
        "the file itself is not sent: {sent}"
    );
}
