//! The permission engine inside turns: modes, grants that survive restarts, who may answer, and
//! answers given as chat replies.

use serde_json::json;
use workmate_engine::{Error, reply_token};
use workmate_protocol::{
    Actor, ApprovalChoice, Command, EventKind, PermissionMode, Resolution, Surface, ToolStatus,
};
use workmate_store::{InboxItemState, NewUser, Role};

use crate::support::{Harness, Options, first_outcome, script, state_names};

fn writes(n: usize) -> String {
    let turns: Vec<_> = (0..n)
        .flat_map(|_| {
            [
                json!({"tool_calls": [{"name": "probe_write", "arguments": {"path": "a.md"}}]}),
                json!({"text": "ok"}),
            ]
        })
        .collect();
    script(json!(turns))
}

fn approve(choice: ApprovalChoice) -> Resolution {
    Resolution::Approval { choice }
}

#[tokio::test]
async fn always_this_tool_is_kept_for_the_session_and_survives_a_restart() {
    let mut h = Harness::new(&writes(3)).await;
    h.say("write").await;
    let events = h
        .events_until(|e| matches!(e.kind, EventKind::PermissionRequired { .. }))
        .await;
    let EventKind::PermissionRequired { choices, .. } = &events.last().unwrap().kind else {
        unreachable!()
    };
    assert_eq!(
        choices,
        &vec![
            ApprovalChoice::Once,
            ApprovalChoice::AlwaysTool,
            ApprovalChoice::Deny
        ]
    );
    let item = h.parked().await;
    h.decide(&item, ApprovalChoice::AlwaysTool).await;
    h.turn_events().await;
    h.idle().await;

    h.say("write again").await;
    let events = h.turn_events().await;
    assert!(
        !state_names(&events).contains(&"permission_required"),
        "granted for the session"
    );
    assert_eq!(h.writes.calls(), 2);
    h.idle().await;

    let mut restarted = Harness::reopen(
        h.dir.clone(),
        h.session.clone(),
        &writes(3),
        Options::default(),
    )
    .await;
    h.keep_files();
    restarted.say("and once more").await;
    let events = restarted.turn_events().await;
    assert!(
        !state_names(&events).contains(&"permission_required"),
        "the grant survived the restart"
    );
    assert_eq!(restarted.writes.calls(), 1);
}

#[tokio::test]
async fn read_only_modes_refuse_without_asking() {
    let mut h = Harness::new(&writes(1)).await;
    h.command(Command::SetMode {
        mode: PermissionMode::Discuss,
        actor: Actor::new("u_alice"),
    })
    .await
    .unwrap();
    h.say("write").await;
    let events = h.turn_events().await;
    let finished = first_outcome(&events);
    assert_eq!(
        finished,
        (ToolStatus::Denied, Some("discuss mode is read-only".into()))
    );
    assert!(!state_names(&events).contains(&"permission_required"));
}

#[tokio::test]
async fn only_the_owner_approvers_and_admins_may_answer() {
    let mut h = Harness::new(&writes(1)).await;
    let admin = NewUser {
        id: "u_root".into(),
        display_name: "Root".into(),
        email: None,
        role: Role::Admin,
        sso_subject: None,
    };
    h.store
        .tenants()
        .upsert_user(&h.tenant, &admin)
        .await
        .unwrap();
    h.say("write").await;
    let item = h.parked().await;
    let once = approve(ApprovalChoice::Once);
    let refused = h
        .hub
        .resolve(
            &h.tenant,
            &item,
            &once,
            &Actor::new("u_eve"),
            Surface::Slack,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, Error::Forbidden(why) if why.contains("whose conversation this is")),
        "{refused}"
    );
    let stored = h
        .store
        .inbox()
        .get(&h.tenant, &item)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.state,
        InboxItemState::Pending,
        "a refused attempt changes nothing"
    );
    let audit = h.store.audit().recent(&h.tenant, 20).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.stage == "approval_refused" && r.actor.as_deref() == Some("u_eve"))
    );
    // An admin may answer any prompt of the tenant.
    h.hub
        .resolve(
            &h.tenant,
            &item,
            &once,
            &Actor::new("u_root"),
            Surface::Http,
        )
        .await
        .unwrap();
    assert_eq!(
        h.turn_events()
            .await
            .iter()
            .filter(|e| matches!(
                e.kind,
                EventKind::ToolFinished {
                    status: ToolStatus::Ok,
                    ..
                }
            ))
            .count(),
        1
    );
}

/// A session whose tenant demands separation of duties, about to write once.
async fn separated_duties() -> Harness {
    let h = Harness::new(&writes(1)).await;
    h.store
        .tenants()
        .set_settings(&h.tenant, &json!({"separation_of_duties": true}))
        .await
        .unwrap();
    h
}

#[tokio::test]
async fn separation_of_duties_forbids_approving_your_own_external_call() {
    let mut h = separated_duties().await;
    h.say("write").await;
    let item = h.parked().await;
    let refused = h
        .decide_as(&item, ApprovalChoice::Once, &Harness::alice())
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("Separation of duties"),
        "{refused}"
    );
    // A choice that was not offered is refused too.
    let refused = h
        .decide_as(&item, ApprovalChoice::AlwaysCommand, &Actor::new("u_bob"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("was not offered"), "{refused}");
    // Another approver may approve; the requester could still have denied.
    h.decide_as(&item, ApprovalChoice::Once, &Actor::new("u_bob"))
        .await
        .unwrap();
    h.turn_events().await;
    assert_eq!(h.writes.calls(), 1);
}

#[tokio::test]
async fn the_requester_may_still_deny_under_separation_of_duties() {
    let mut h = separated_duties().await;
    h.say("write").await;
    let item = h.parked().await;
    h.decide(&item, ApprovalChoice::Deny).await;
    let events = h.turn_events().await;
    assert!(events.iter().any(|e| matches!(
        e.kind,
        EventKind::ToolFinished {
            status: ToolStatus::Denied,
            ..
        }
    )));
}

#[tokio::test]
async fn a_chat_reply_with_the_token_answers_the_prompt() {
    let mut h = Harness::new(&writes(1)).await;
    h.say("write").await;
    let item = h.parked().await;
    let none = h
        .hub
        .resolve_reply(
            &h.tenant,
            "approve it please",
            &Actor::new("u_bob"),
            Surface::Slack,
        )
        .await
        .unwrap();
    assert!(none.is_none(), "no token, not an answer");
    let unclear = h
        .hub
        .resolve_reply(
            &h.tenant,
            &format!("hmm {}", reply_token(&item)),
            &Actor::new("u_bob"),
            Surface::Slack,
        )
        .await
        .unwrap_err();
    assert!(unclear.to_string().contains("approve"), "{unclear}");
    let short = &item.as_str()[..13];
    let answered = h
        .hub
        .resolve_reply(
            &h.tenant,
            &format!("👍 [wm:{short}]"),
            &Actor::new("u_bob"),
            Surface::Slack,
        )
        .await
        .unwrap();
    assert!(matches!(
        answered,
        Some(workmate_store::ResolveOutcome::Resolved(_))
    ));
    h.turn_events().await;
    assert_eq!(h.writes.calls(), 1);
    let stranger = h
        .hub
        .resolve_reply(
            &h.tenant,
            &format!("no {}", reply_token(&item)),
            &Actor::new("u_eve"),
            Surface::Slack,
        )
        .await;
    assert!(
        matches!(stranger, Err(Error::Forbidden(_))),
        "replies go through the same authority check"
    );
}

#[tokio::test]
async fn tenant_risk_overrides_apply() {
    let mut h = Harness::new(&writes(1)).await;
    let settings =
        json!({"permissions": {"risk_overrides": [{"pattern": "probe_*", "risk": "read"}]}});
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
    h.say("write").await;
    let events = h.turn_events().await;
    assert!(
        !state_names(&events).contains(&"permission_required"),
        "overridden to read"
    );
    assert_eq!(h.writes.calls(), 1);
}
