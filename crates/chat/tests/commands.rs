//! The `/workmate` commands, once for every platform: thread commands, native commands, replays,
//! bootstrap admins and the last-admin rule.

use workmate_chat::PlatformSettings;
use workmate_protocol::UserId;
use workmate_store::Role;

use crate::support::{DONE, PATIENCE, TestChat, command, eventually_holds, message};

async fn role(chat: &TestChat, user: &str) -> Role {
    chat.store
        .tenants()
        .get_user(&chat.tenant, &UserId::from(user))
        .await
        .unwrap()
        .unwrap()
        .role
}

fn admins(ids: &[&str]) -> PlatformSettings {
    PlatformSettings {
        admins: ids.iter().map(|s| (*s).to_owned()).collect(),
        admins_in: None,
    }
}

#[tokio::test]
async fn configured_admins_are_admins_at_first_sight_and_others_members() {
    let chat = TestChat::with(DONE, admins(&["U1"])).await;
    let reply = chat.chat.command(command("tr1", "U1", "whoami")).await;
    assert!(
        reply.text.contains("admin in tenant feishu-T1"),
        "{}",
        reply.text
    );
    assert!(
        reply.text.contains("(Alice)"),
        "named as the platform shows them: {}",
        reply.text
    );
    let reply = chat.chat.command(command("tr2", "U2", "whoami")).await;
    assert!(reply.text.contains("member"), "{}", reply.text);
}

#[tokio::test]
async fn configured_admins_bound_to_an_installation_are_members_in_any_other() {
    let settings = PlatformSettings {
        admins: vec!["U1".into()],
        admins_in: Some("T1".into()),
    };
    let chat = TestChat::with(DONE, settings).await;
    // The same id in another organisation (which anyone can create and install the app in).
    let mut elsewhere = command("tr-other", "U1", "whoami");
    elsewhere.tenant_key = "T-evil".into();
    let reply = chat.chat.command(elsewhere).await;
    assert!(
        reply.text.contains("member in tenant feishu-T-evil"),
        "{}",
        reply.text
    );
    let reply = chat.chat.command(command("tr-home", "U1", "whoami")).await;
    assert!(
        reply.text.contains("admin in tenant feishu-T1"),
        "{}",
        reply.text
    );
}

#[tokio::test]
async fn a_replayed_role_grant_changes_nothing() {
    let chat = TestChat::with(DONE, admins(&["U1"])).await;
    let grant = command("tr-grant", "U1", "role grant U2 approver");
    let reply = chat.chat.command(grant.clone()).await;
    assert!(reply.text.contains("is now approver"), "{}", reply.text);
    let reply = chat
        .chat
        .command(command("tr-revoke", "U1", "role revoke U2 approver"))
        .await;
    assert!(reply.text.contains("is now a member"), "{}", reply.text);
    // The same signed body again: acknowledged, not applied.
    let replay = chat.chat.command(grant).await;
    assert!(replay.text.contains("delivered twice"), "{}", replay.text);
    assert_eq!(role(&chat, "feishu-U2").await, Role::Member);
}

#[tokio::test]
async fn only_admins_grant_and_the_last_admin_stays() {
    let chat = TestChat::with(DONE, admins(&["U1"])).await;
    chat.chat.command(command("tr0", "U1", "whoami")).await;
    let reply = chat
        .chat
        .command(command("tr1", "U2", "role grant U2 admin"))
        .await;
    assert!(reply.text.contains("Only admins"), "{}", reply.text);
    assert_eq!(role(&chat, "feishu-U2").await, Role::Member);
    let reply = chat
        .chat
        .command(command("tr2", "U1", "role revoke U1 admin"))
        .await;
    assert!(reply.text.contains("last admin"), "{}", reply.text);
    assert_eq!(role(&chat, "feishu-U1").await, Role::Admin);
    // With a second admin, the first may step down.
    chat.chat
        .command(command("tr3", "U1", "role grant U2 admin"))
        .await;
    let reply = chat
        .chat
        .command(command("tr4", "U1", "role revoke U1 admin"))
        .await;
    assert!(reply.text.contains("is now a member"), "{}", reply.text);
}

#[tokio::test]
async fn a_command_in_a_thread_answers_privately_and_starts_no_turn() {
    let chat = TestChat::new(DONE).await;
    chat.send(message("Ev1", "U1", "t1", "hello")).await;
    let session = chat.session("t1").await;
    eventually_holds("the first turn ends", PATIENCE, || async {
        chat.last_turn_ended(&session).await
    })
    .await;
    chat.send(message("Ev2", "U1", "t1", "/workmate mode"))
        .await;
    eventually_holds("the private answer", PATIENCE, || async {
        chat.platform
            .private_to("U1")
            .iter()
            .any(|t| t.contains("The mode is interactive"))
    })
    .await;
    chat.send(message("Ev3", "U2", "t1", "/workmate mode auto"))
        .await;
    eventually_holds("the refusal", PATIENCE, || async {
        chat.platform
            .private_to("U2")
            .iter()
            .any(|t| t.contains("Only the conversation's owner"))
    })
    .await;
    chat.send(message("Ev4", "U1", "t1", "/workmate mode plan"))
        .await;
    eventually_holds("the owner's change", PATIENCE, || async {
        chat.store
            .sessions()
            .get(&chat.tenant, &session.id)
            .await
            .unwrap()
            .unwrap()
            .mode
            == workmate_protocol::PermissionMode::Plan
    })
    .await;
    assert_eq!(
        chat.turns(&session).await,
        1,
        "commands are not messages to the model"
    );
}

#[tokio::test]
async fn a_native_command_in_a_channel_says_how_to_reach_a_thread() {
    let chat = TestChat::new(DONE).await;
    let reply = chat.chat.command(command("tr1", "U1", "mode plan")).await;
    assert!(
        reply.text.contains("inside the conversation's thread"),
        "{}",
        reply.text
    );
    let reply = chat.chat.command(command("tr2", "U1", "frobnicate")).await;
    assert!(reply.text.contains("usage: /workmate"), "{}", reply.text);
}

#[tokio::test]
async fn members_see_their_own_inbox_and_approvers_everyone_s() {
    let chat = TestChat::with(crate::support::SHELL, admins(&["U9"])).await;
    chat.send(message("Ev1", "U1", "t1", "run it")).await;
    let session = chat.session("t1").await;
    eventually_holds("the approval is parked", PATIENCE, || async {
        !chat
            .store
            .inbox()
            .list(&chat.tenant, &workmate_store::InboxFilter::default(), 10)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    let mine = chat.chat.command(command("tr1", "U1", "inbox")).await;
    assert!(mine.text.contains("1 waiting"), "{}", mine.text);
    // As a card: the approval with its buttons, who asked and how long it waited.
    let card = mine.card.expect("the inbox is a card");
    let shown = serde_json::to_string(&card).unwrap();
    assert!(
        shown.contains("echo hi") && shown.contains("Waiting"),
        "{shown}"
    );
    let buttons: Vec<&workmate_cards::Button> = card
        .blocks
        .iter()
        .filter_map(|b| match b {
            workmate_cards::Block::Actions(buttons) => Some(buttons),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(
        buttons.iter().any(|b| matches!(
            &b.action,
            workmate_cards::ButtonAction::Resolve { resolution: workmate_protocol::Resolution::Approval { choice }, .. }
                if *choice == workmate_protocol::ApprovalChoice::Once
        )),
        "{shown}"
    );
    let theirs = chat.chat.command(command("tr2", "U2", "inbox")).await;
    assert!(
        theirs.text.contains("Nothing is waiting"),
        "{}",
        theirs.text
    );
    chat.chat
        .command(command("tr3", "U9", "role grant U2 approver"))
        .await;
    let approver = chat.chat.command(command("tr4", "U2", "inbox")).await;
    assert!(approver.text.contains("1 waiting"), "{}", approver.text);
    // The approver answers from the inbox card: its button is a click like any other.
    let once = approver
        .card
        .unwrap()
        .blocks
        .into_iter()
        .find_map(|b| match b {
            workmate_cards::Block::Actions(buttons) => buttons.into_iter().next(),
            _ => None,
        })
        .unwrap();
    let answered = chat
        .chat
        .click_now(crate::support::click("C-inbox", "U2", "t1", once.action))
        .await
        .unwrap();
    assert_eq!(
        answered.kind,
        workmate_adapter::ToastKind::Success,
        "{answered:?}"
    );
    drop(session);
}
