//! `propose_plan`: in plan mode a plan is parked for a person; an approval switches the
//! session's mode (auto only for whoever may choose it) and the model implements the plan at
//! once, a rejection hands the feedback back, and outside plan mode nothing is parked.

use serde_json::json;
use workmate_protocol::{
    Actor, Command, EventKind, Message, PermissionMode, Resolution, Surface, ToolStatus,
};
use workmate_store::NewUser;

use crate::support::{Harness, first_outcome, script, state_names};

/// A model that proposes a plan, then writes (a call that asks in interactive mode), then ends.
fn planner() -> String {
    script(json!([
        {"tool_calls": [{"name": "propose_plan", "arguments": {"plan": "## Add the route\n1. Write the handler\n2. Test it"}}]},
        {"tool_calls": [{"name": "probe_write", "arguments": {}}]},
        {"text": "Done."}
    ]))
}

async fn in_plan_mode(script: &str) -> Harness {
    let h = Harness::new(script).await;
    h.command(Command::SetMode {
        mode: PermissionMode::Plan,
        actor: Harness::alice(),
    })
    .await
    .unwrap();
    h
}

async fn admin(h: &Harness) -> Actor {
    let user = NewUser {
        id: "u_dana".into(),
        display_name: "Dana".into(),
        email: None,
        role: workmate_store::Role::Admin,
        sso_subject: None,
    };
    h.store
        .tenants()
        .upsert_user(&h.tenant, &user)
        .await
        .unwrap();
    Actor::named("u_dana", "Dana")
}

fn tool_result(history: &[Message], name: &str) -> serde_json::Value {
    let id = history
        .iter()
        .find_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .find(|c| c.name == name)
                .map(|c| c.id.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {name} call"));
    history
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                tool_call_id,
                content,
                ..
            } if *tool_call_id == id => serde_json::from_str(content).ok(),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {name} result"))
}

#[tokio::test]
async fn a_plan_approved_into_auto_mode_runs_its_write_without_a_prompt() {
    let mut h = in_plan_mode(&planner()).await;
    h.say("add a health route").await;
    let events = h
        .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
        .await;
    assert!(state_names(&events).contains(&"plan_proposed"));
    let EventKind::InboxItemParked { item_id, .. } = &events.last().unwrap().kind else {
        unreachable!()
    };
    let item = h
        .store
        .inbox()
        .get(&h.tenant, item_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item.kind, workmate_protocol::InboxItemKind::Plan);
    assert_eq!(item.title, "Plan: Add the route");
    let auto = Resolution::Plan {
        approved: true,
        mode: Some(PermissionMode::Auto),
        feedback: None,
    };
    // An approver who may not choose auto (the tenant's `modes_allowed`) is refused.
    let bob = Actor::named("u_bob", "Bob");
    let refused = h
        .hub
        .resolve(&h.tenant, &item.id, &auto, &bob, Surface::Http)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("auto mode"), "{refused}");
    let dana = admin(&h).await;
    h.hub
        .resolve(&h.tenant, &item.id, &auto, &dana, Surface::Http)
        .await
        .unwrap();
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    let changed = events.iter().find_map(|e| match &e.kind {
        EventKind::ModeChanged { from, to, by } => Some((*from, *to, by.user_id.clone())),
        _ => None,
    });
    assert_eq!(
        changed,
        Some((PermissionMode::Plan, PermissionMode::Auto, "u_dana".into()))
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::PermissionRequired { .. })),
        "the write ran without a prompt: {:?}",
        state_names(&events)
    );
    assert_eq!(h.writes.calls(), 1);
    h.idle().await;
    let history = h.history().await;
    let result = tool_result(&history, "propose_plan");
    assert_eq!(result["approved"], true);
    assert_eq!(result["mode"], "auto");
    assert_eq!(result["note"], "plan approved — implement it now");
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.mode, PermissionMode::Auto);
}

#[tokio::test]
async fn a_rejected_plan_hands_the_feedback_back_and_stays_in_plan_mode() {
    let mut h = in_plan_mode(&script(json!([
        {"tool_calls": [{"name": "propose_plan", "arguments": {"plan": "1. Rewrite everything"}}]},
        {"text": "I will revise it."}
    ])))
    .await;
    h.say("add a health route").await;
    let item = h.parked().await;
    // A reply quoting the card's token rejects it with its text as the feedback.
    let reply = format!("no, smaller steps please {}", item.reply_token());
    h.hub
        .resolve_reply(&h.tenant, &reply, &Harness::alice(), Surface::Slack)
        .await
        .unwrap()
        .unwrap();
    let events = h.turn_events().await;
    let (status, _) = first_outcome(&events);
    assert_eq!(status, ToolStatus::Error);
    h.idle().await;
    let result = tool_result(&h.history().await, "propose_plan");
    assert_eq!(result["approved"], false);
    assert_eq!(result["feedback"], "no, smaller steps please");
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.mode, PermissionMode::Plan);
}

#[tokio::test]
async fn outside_plan_mode_a_plan_is_answered_at_once_and_nothing_is_parked() {
    let mut h = Harness::new(&script(json!([
        {"tool_calls": [{"name": "propose_plan", "arguments": {"plan": "1. Do it"}}]},
        {"text": "Doing it."}
    ])))
    .await;
    h.say("add a health route").await;
    let events = h.turn_events().await;
    assert!(!state_names(&events).contains(&"plan_proposed"));
    let (status, _) = first_outcome(&events);
    assert_eq!(status, ToolStatus::Error);
    h.idle().await;
    let result = tool_result(&h.history().await, "propose_plan");
    assert!(result.to_string().contains("not in plan mode"), "{result}");
    let filter = workmate_store::InboxFilter {
        session: Some(h.session.clone()),
        ..workmate_store::InboxFilter::default()
    };
    assert!(
        h.store
            .inbox()
            .list(&h.tenant, &filter, 10)
            .await
            .unwrap()
            .is_empty()
    );
}
