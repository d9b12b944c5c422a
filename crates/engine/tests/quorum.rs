//! Approval quorums: a call the tenant's `approval_quorum` covers needs several distinct
//! approvers; the requester never counts, and only the named group's members do.

use serde_json::json;
use workmate_protocol::{Actor, ApprovalChoice, EventKind, Resolution, ToolStatus};
use workmate_store::{InboxItemState, NewUser, ResolveOutcome, Role};

use crate::support::{Harness, script};

fn one_write() -> String {
    script(json!([
        {"tool_calls": [{"name": "probe_write", "arguments": {"path": "a.md"}}]},
        {"text": "ok"}
    ]))
}

/// Two of the `sre` group (Alice, Bob, Carol) must approve every call; Dave is an approver
/// outside the group.
async fn two_of_three() -> Harness {
    let h = Harness::new(&one_write()).await;
    let dave = NewUser {
        id: "u_dave".into(),
        display_name: "Dave".into(),
        email: None,
        role: Role::Approver,
        sso_subject: None,
    };
    h.store
        .tenants()
        .upsert_user(&h.tenant, &dave)
        .await
        .unwrap();
    let settings = json!({
        "approver_groups": {"sre": ["u_alice", "u_bob", "u_carol"]},
        "approval_quorum": [{"category": "*", "required": 2, "group": "sre"}],
    });
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
    h
}

#[tokio::test]
async fn a_two_of_three_approval_needs_two_distinct_approvers_and_never_the_requester() {
    let mut h = two_of_three().await;
    h.say("write").await;
    let events = h
        .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
        .await;
    let required = events.iter().find_map(|e| match &e.kind {
        EventKind::PermissionRequired {
            approvals_required, ..
        } => Some(*approvals_required),
        _ => None,
    });
    assert_eq!(required, Some(Some(2)), "the prompt says how many it needs");
    let EventKind::InboxItemParked { item_id: item, .. } = &events.last().unwrap().kind else {
        unreachable!()
    };

    // The requester is in the group, and still does not count.
    let refused = h
        .decide_as(item, ApprovalChoice::Once, &Harness::alice())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("never counts"), "{refused}");
    // An approver outside the group does not count either.
    let refused = h
        .decide_as(item, ApprovalChoice::Once, &Actor::new("u_dave"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("`sre`"), "{refused}");

    // Bob's approval is counted; counted again, it is still one.
    for _ in 0..2 {
        let counted = h
            .decide_as(item, ApprovalChoice::Once, &Actor::named("u_bob", "Bob"))
            .await
            .unwrap();
        let ResolveOutcome::Counted {
            approvals,
            required,
            item: pending,
        } = counted
        else {
            panic!("{counted:?}")
        };
        assert_eq!((approvals.len(), required), (1, 2));
        assert_eq!(pending.state, InboxItemState::Pending);
    }
    let counted = h
        .events_until(|e| matches!(e.kind, EventKind::ApprovalCounted { .. }))
        .await;
    let EventKind::ApprovalCounted {
        approvals,
        required,
        approved_by,
        ..
    } = &counted.last().unwrap().kind
    else {
        unreachable!()
    };
    assert_eq!(
        (*approvals, *required, approved_by.user_id.as_str()),
        (1, 2, "u_bob")
    );

    // Carol's completes the quorum: the call runs, once.
    let resolved = h
        .decide_as(
            item,
            ApprovalChoice::Once,
            &Actor::named("u_carol", "Carol"),
        )
        .await
        .unwrap();
    assert!(
        matches!(resolved, ResolveOutcome::Resolved(_)),
        "{resolved:?}"
    );
    let events = h.turn_events().await;
    assert!(events.iter().any(|e| matches!(
        &e.kind,
        EventKind::InboxItemResolved {
            resolution: Resolution::Approval {
                choice: ApprovalChoice::Once
            },
            ..
        }
    )));
    assert_eq!(h.writes.calls(), 1);
    // A late approval learns it was decided.
    let late = h
        .decide_as(item, ApprovalChoice::Once, &Actor::new("u_dave"))
        .await;
    assert!(
        matches!(late, Ok(ResolveOutcome::AlreadyResolved(_)) | Err(_)),
        "{late:?}"
    );
}

#[tokio::test]
async fn one_denial_decides_and_a_standing_grant_needs_everyones_agreement() {
    let mut h = two_of_three().await;
    h.say("write").await;
    let item = h.parked().await;
    h.decide_as(&item, ApprovalChoice::Deny, &Actor::new("u_bob"))
        .await
        .unwrap();
    let events = h.turn_events().await;
    assert!(events.iter().any(|e| matches!(
        e.kind,
        EventKind::ToolFinished {
            status: ToolStatus::Denied,
            ..
        }
    )));
    assert_eq!(h.writes.calls(), 0);

    let agreed = workmate_store::agreed(&[
        workmate_store::CountedApproval {
            user_id: "u_bob".into(),
            choice: ApprovalChoice::AlwaysTool,
        },
        workmate_store::CountedApproval {
            user_id: "u_carol".into(),
            choice: ApprovalChoice::Once,
        },
    ]);
    assert_eq!(agreed, ApprovalChoice::Once);
}

#[tokio::test]
async fn an_approver_group_alone_decides_who_may_approve() {
    let mut h = Harness::new(&one_write()).await;
    let settings = json!({
        "approver_groups": {"sre": ["u_carol"]},
        "approval_quorum": [{"category": "*", "required": 1, "group": "sre"}],
    });
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
    h.say("write").await;
    let item = h.parked().await;
    // Bob is an approver, but not in the group.
    let refused = h
        .decide_as(&item, ApprovalChoice::Once, &Actor::new("u_bob"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("`sre`"), "{refused}");
    // Carol is: one approval is enough.
    let resolved = h
        .decide_as(&item, ApprovalChoice::Once, &Actor::new("u_carol"))
        .await
        .unwrap();
    assert!(
        matches!(resolved, ResolveOutcome::Resolved(_)),
        "{resolved:?}"
    );
    h.turn_events().await;
    assert_eq!(h.writes.calls(), 1);
}
