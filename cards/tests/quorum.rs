//! An approval that needs several approvers: the card says how many it has and whose.

use insta::assert_snapshot;
use serde_json::json;
use workmate_cards::approval_card;
use workmate_protocol::{Actor, ApprovalChoice, EventKind, InboxItemKind, Resolution, Surface};

use crate::support::{Story, bob, buttons, context_lines, item, json as to_json};

fn carol() -> Actor {
    Actor::named("u_carol", "Carol Wu")
}

/// Alice's shell call needs two approvals.
fn needing_two() -> Story {
    let mut s = Story::asking_which_deploys_failed();
    let command = json!({"command": "kubectl rollout restart deploy/api"});
    s.propose("call_q", "run_shell", command.clone());
    s.state(EventKind::PermissionRequired {
        tool_call_id: "call_q".into(),
        name: "run_shell".into(),
        arguments: command,
        reason: "run_shell changes things in production; two approvers must agree".into(),
        category: "shell".into(),
        standing_target: None,
        readonly_ok: false,
        choices: vec![ApprovalChoice::Once, ApprovalChoice::Deny],
        approvals_required: Some(2),
    });
    s.park("call_q", "ib_q", InboxItemKind::Approval, "run_shell");
    s
}

fn counted(s: &mut Story, by: Actor, approvals: u32) {
    s.state(EventKind::ApprovalCounted {
        item_id: "ib_q".into(),
        approved_by: by,
        choice: ApprovalChoice::Once,
        via: Surface::Slack,
        approvals,
        required: 2,
    });
}

#[test]
fn the_card_counts_approvals_until_the_quorum_is_reached() {
    let mut s = needing_two();
    let pending = approval_card(s.view().approval(&item("ib_q")).unwrap());
    assert!(context_lines(&pending).contains(&"🗳 0 of 2 approvals".to_owned()));
    counted(&mut s, bob(), 1);
    counted(&mut s, bob(), 1);
    let one = approval_card(s.view().approval(&item("ib_q")).unwrap());
    assert!(
        context_lines(&one).contains(&"🗳 1 of 2 approvals · Bob Li".to_owned()),
        "{:?}",
        context_lines(&one)
    );
    assert_eq!(buttons(&one).len(), 2, "still waiting for an approval");
    assert_snapshot!("approval_quorum_one_of_two", to_json(&one));

    let once = Resolution::Approval {
        choice: ApprovalChoice::Once,
    };
    s.resolve("call_q", "ib_q", InboxItemKind::Approval, once, carol());
    let done = approval_card(s.view().approval(&item("ib_q")).unwrap());
    let lines = context_lines(&done);
    assert!(
        lines.contains(&"🗳 2 of 2 approvals · Bob Li, Carol Wu".to_owned()),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "✅ Approved by Carol Wu · once");
    assert!(buttons(&done).is_empty());
    assert_snapshot!("approval_quorum_reached", to_json(&done));
}

#[test]
fn a_denial_after_an_approval_says_who_had_approved() {
    let mut s = needing_two();
    counted(&mut s, bob(), 1);
    let deny = Resolution::Approval {
        choice: ApprovalChoice::Deny,
    };
    s.resolve("call_q", "ib_q", InboxItemKind::Approval, deny, carol());
    let denied = approval_card(s.view().approval(&item("ib_q")).unwrap());
    let lines = context_lines(&denied);
    assert!(
        lines.contains(&"🗳 Approved by Bob Li before the denial".to_owned()),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "❌ Denied by Carol Wu");
}
