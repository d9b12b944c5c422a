//! Approvals parked in the inbox: approve, deny, and racing answers.

use serde_json::json;
use workmate_protocol::{
    Actor, ApprovalChoice, Command, EventKind, InboxItemId, Message, Resolution, Surface,
    ToolStatus,
};
use workmate_store::{InboxItemState, ResolveOutcome};

use crate::support::{Harness, first_outcome, script, state_names};

fn write_then_answer() -> String {
    script(json!([
        {"text": "I'll save it.", "tool_calls": [{"name": "probe_write", "arguments": {"path": "report.md"}}]},
        {"text": "Saved."}
    ]))
}

async fn parked_item(h: &mut Harness) -> InboxItemId {
    let events = h
        .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
        .await;
    assert_eq!(
        state_names(&events),
        vec![
            "turn_start",
            "assistant_message",
            "tool_proposed",
            "permission_required",
            "inbox_item_parked"
        ]
    );
    let EventKind::InboxItemParked { item_id, .. } = &events.last().unwrap().kind else {
        unreachable!()
    };
    item_id.clone()
}

#[tokio::test]
async fn an_approved_call_runs_once_and_the_turn_completes() {
    let mut h = Harness::new(&write_then_answer()).await;
    h.say("save the report").await;
    let item = parked_item(&mut h).await;
    // The assistant message holding the call is stored before the prompt is shown.
    let history = h.history().await;
    assert!(
        matches!(history.last().unwrap(), Message::Assistant { tool_calls, .. } if tool_calls.len() == 1)
    );
    let stored = h
        .store
        .inbox()
        .get(&h.tenant, &item)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.title, "Run `probe_write`?");
    assert!(stored.body.contains("path: report.md"), "{}", stored.body);

    let once = Resolution::Approval {
        choice: ApprovalChoice::Once,
    };
    let outcome = h
        .hub
        .resolve(
            &h.tenant,
            &item,
            &once,
            &Actor::named("u_bob", "Bob"),
            Surface::Slack,
        )
        .await
        .unwrap();
    assert!(matches!(outcome, ResolveOutcome::Resolved(_)));
    let events = h.turn_events().await;
    assert_eq!(
        state_names(&events),
        vec![
            "inbox_item_resolved",
            "tool_started",
            "tool_finished",
            "iteration_end",
            "assistant_message",
            "turn_end"
        ]
    );
    let EventKind::InboxItemResolved {
        resolved_by, via, ..
    } = &events[0].kind
    else {
        unreachable!()
    };
    assert_eq!(
        (resolved_by.user_id.as_str(), *via),
        ("u_bob", Surface::Slack)
    );
    assert_eq!(h.writes.calls(), 1);
    let resolved = h
        .store
        .inbox()
        .get(&h.tenant, &item)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (resolved.state, resolved.resolved_by.unwrap().as_str()),
        (InboxItemState::Resolved, "u_bob")
    );
}

#[tokio::test]
async fn a_denied_call_is_a_tool_error_the_model_sees() {
    let mut h = Harness::new(&write_then_answer()).await;
    h.say("save the report").await;
    let item = parked_item(&mut h).await;
    let deny = Command::ResolveInbox {
        item_id: item,
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Deny,
        },
        actor: Harness::alice(),
        via: Surface::Http,
    };
    h.command(deny).await.unwrap();
    let events = h.turn_events().await;
    let finished = first_outcome(&events);
    assert_eq!(
        finished,
        (ToolStatus::Denied, Some("denied by user".into()))
    );
    assert!(
        matches!(events.last().unwrap().kind, EventKind::TurnEnd { .. }),
        "the model answers after a denial"
    );
    assert_eq!(h.writes.calls(), 0);
    h.idle().await;
    let history = h.history().await;
    let tool = history
        .iter()
        .find_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        tool,
        r#"{"error":"tool call not executed","reason":"denied by user"}"#
    );
}

#[tokio::test]
async fn the_first_of_two_concurrent_answers_wins() {
    let mut h = Harness::new(&write_then_answer()).await;
    h.say("save the report").await;
    let item = parked_item(&mut h).await;
    let allow = Resolution::Approval {
        choice: ApprovalChoice::Once,
    };
    let deny = Resolution::Approval {
        choice: ApprovalChoice::Deny,
    };
    let (bob, carol) = (Actor::new("u_bob"), Actor::new("u_carol"));
    let (a, b) = tokio::join!(
        h.hub
            .resolve(&h.tenant, &item, &allow, &bob, Surface::Slack),
        h.hub
            .resolve(&h.tenant, &item, &deny, &carol, Surface::Feishu),
    );
    let outcomes = [a.unwrap(), b.unwrap()];
    let winners: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            ResolveOutcome::Resolved(i) => Some(i.clone()),
            _ => None,
        })
        .collect();
    let losers: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            ResolveOutcome::AlreadyResolved(i) => Some(i.clone()),
            _ => None,
        })
        .collect();
    assert_eq!((winners.len(), losers.len()), (1, 1));
    assert_eq!(
        losers[0].resolved_by, winners[0].resolved_by,
        "the loser learns who won"
    );
    let events = h.turn_events().await;
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::InboxItemResolved { .. }))
            .count(),
        1
    );
    let ran = usize::from(winners[0].resolution == Some(allow));
    assert_eq!(h.writes.calls(), ran);
}

#[tokio::test]
async fn ask_user_parks_a_question_and_returns_the_answer() {
    let mut h = Harness::new(&script(json!([
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which week?", "options": ["This week", "Last week"]}}]},
        {"text": "Got it."}
    ]))).await;
    h.say("write the report").await;
    let events = h
        .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
        .await;
    assert!(state_names(&events).contains(&"question_requested"));
    let EventKind::InboxItemParked { item_id, .. } = &events.last().unwrap().kind else {
        unreachable!()
    };
    let answer = Resolution::Answer {
        text: "Last week".into(),
    };
    h.hub
        .resolve(
            &h.tenant,
            item_id,
            &answer,
            &Harness::alice(),
            Surface::Http,
        )
        .await
        .unwrap();
    let events = h.turn_events().await;
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TurnEnd { .. }
    ));
    h.idle().await;
    let tool = h
        .history()
        .await
        .into_iter()
        .find_map(|m| match m {
            Message::Tool { content, .. } => Some(content),
            _ => None,
        })
        .unwrap();
    assert_eq!(tool, r#"{"answer":"Last week"}"#);
}
