//! Finding 6 of the second review: a DingTalk HTTP card callback's signature covers only its
//! timestamp, and its age was never checked, so a two-hour-old header pair approved a write,
//! with any body; and the clicker's `userId` was taken from that unsigned body, so anyone who
//! could click a card (or see one click's headers) approved as any approver.
//!
//! Now a card callback is believed for five minutes at most, each signature pair only once, and
//! a click only with the clicker's own key: the approval card's private data gives each person
//! who may decide (the owner, the approvers, the admins) a key bound to them and to that card,
//! which only their own client receives and the button sends back. A stranger's own click with
//! `userId` swapped for an approver's, even freshly signed, carries the wrong key.

use axum::http::StatusCode;
use serde_json::Value;
use workmate_dingtalk::sign;
use workmate_store::InboxItemState;

use crate::dingtalk::http::{card, card_signed, http_app, now_ms, post, robot};
use crate::dingtalk::{
    CLIENT_SECRET, approval_card, item_state, keyed_click, parked, robot_message, turns,
};

/// `click` claiming to come from `user`: the same body, its `userId` replaced.
fn as_user(click: &Value, user: &str) -> Value {
    let mut forged = click.clone();
    forged["userId"] = user.into();
    forged
}

#[tokio::test]
async fn an_old_or_used_signature_pair_approves_nothing() {
    let app = http_app().await;
    let (status, _) = robot(
        &app,
        &robot_message("msg-1", "run it"),
        now_ms(),
        CLIENT_SECRET,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;
    let (_, created) = approval_card(&app, &item).await;
    let boss = keyed_click(&created, "boss", "once");

    // The approver's own click body, with a pair captured two hours ago: refused.
    let old = (now_ms() - 2 * 60 * 60 * 1000).to_string();
    let old_sign = sign::card_callback_sign(CLIENT_SECRET, &old);
    let (status, _) = card_signed(&app, &boss, &old, &old_sign).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // A fresh pair used once is not used again, whatever the body.
    let fresh = (now_ms() - 1).to_string();
    let fresh_sign = sign::card_callback_sign(CLIENT_SECRET, &fresh);
    let stranger = keyed_click(&created, "stranger", "once");
    let (status, _) = card_signed(&app, &stranger, &fresh, &fresh_sign).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a stranger was given no key");
    let (status, _) = card_signed(&app, &boss, &fresh, &fresh_sign).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);

    // The approver's own fresh click approves.
    let (status, answer) = card(&app, &boss, CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["cardData"]["cardParamMap"]["status"], "approved",
        "{answer:#}"
    );
}

#[tokio::test]
async fn a_strangers_own_click_with_an_approvers_user_id_approves_nothing() {
    let app = http_app().await;
    let (status, _) = robot(
        &app,
        &robot_message("msg-1", "run it"),
        now_ms(),
        CLIENT_SECRET,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let item = parked(&app).await;
    let (_, created) = approval_card(&app, &item).await;

    // Each replayed at once under its own fresh, correctly signed pair (the attacker holds a
    // valid pair: the signature covers only the timestamp).
    let stranger = as_user(&keyed_click(&created, "stranger", "once"), "boss");
    let (status, _) = card(&app, &stranger, CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a stranger holds no key");
    // The requester holds a key, their own: it does not approve in the approver's name (which
    // would get round separation of duties and quorums).
    let requester = as_user(&keyed_click(&created, "ana", "once"), "boss");
    let (status, answer) = card(&app, &requester, CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    // A key of the approver's on another card does not open this one.
    let mut elsewhere = keyed_click(&created, "boss", "once");
    elsewhere["outTrackId"] = "approval_other".into();
    let (status, _) = card(&app, &elsewhere, CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);

    // The approver's own click approves, once.
    let (status, answer) = card(&app, &keyed_click(&created, "boss", "once"), CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["cardData"]["cardParamMap"]["status"], "approved",
        "{answer:#}"
    );
    assert_eq!(item_state(&app, &item).await, InboxItemState::Resolved);
}

#[tokio::test]
async fn a_robot_callbacks_signature_carries_one_message() {
    let app = http_app().await;
    let at = now_ms().to_string();
    let sign = sign::robot_sign(CLIENT_SECRET, &at);
    let headers = [("timestamp", at.as_str()), ("sign", sign.as_str())];
    let route = "/v1/platforms/dingtalk/robot";
    let message = robot_message("msg-ana", "run it");
    let (status, _) = post(&app, route, &headers, &message.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    // DingTalk delivering the same message again under the same pair: taken (and run once).
    let (status, _) = post(&app, route, &headers, &message.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    // The captured pair with another message, in another person's name: refused.
    let mut forged = robot_message("msg-forged", "/workmate mcp add leak {}");
    forged["senderStaffId"] = "boss".into();
    let (status, _) = post(&app, route, &headers, &forged.to_string()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    parked(&app).await;
    assert_eq!(turns(&app).await, 1);
}

#[tokio::test]
async fn a_configured_admins_staff_id_from_another_organisation_is_refused() {
    let app = http_app().await;
    // A correctly signed robot message (the signature covers no body) from an organisation the
    // attacker created, in the name of the configured admin's staff id.
    let mut forged = robot_message("msg-evil", "/workmate mcp add leak {}");
    forged["chatbotCorpId"] = "dingevilcorp".into();
    forged["senderCorpId"] = "dingevilcorp".into();
    forged["senderStaffId"] = "boss".into();
    let (status, answer) = robot(&app, &forged, now_ms(), CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    let evil = workmate_chat::tenant_of(workmate_protocol::Surface::Dingtalk, "dingevilcorp");
    assert!(
        app.store.tenants().get(&evil).await.unwrap().is_none(),
        "no tenant was made"
    );

    // A message of the configured organisation is taken.
    let (status, _) = robot(
        &app,
        &robot_message("msg-1", "run it"),
        now_ms(),
        CLIENT_SECRET,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    parked(&app).await;
}
