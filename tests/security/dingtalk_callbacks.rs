//! Finding 6 of the second review: a DingTalk HTTP card callback's signature covers only its
//! timestamp, and its age was never checked, so a two-hour-old header pair approved a write,
//! with any body. A card callback is now believed for five minutes at most, and each signature
//! pair only once: a captured pair replayed with another body (another `userId`) is refused.
//!
//! Not yet closed (see the note): binding a click to its clicker through per-user
//! private card data, and checking the body's conversation and member against what workmate
//! sent and saw.

use axum::http::StatusCode;
use workmate_dingtalk::sign;
use workmate_store::InboxItemState;

use crate::dingtalk::http::{card, card_signed, http_app, now_ms, post, robot};
use crate::dingtalk::{
    CLIENT_SECRET, approval_card, click, item_state, parked, robot_message, turns,
};

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
    let (out_track_id, _) = approval_card(&app, &item).await;

    // A pair captured two hours ago, correctly signed, with the approver's userId.
    let old = (now_ms() - 2 * 60 * 60 * 1000).to_string();
    let old_sign = sign::card_callback_sign(CLIENT_SECRET, &old);
    let forged = click(&out_track_id, "boss", "once");
    let (status, _) = card_signed(&app, &forged, &old, &old_sign).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // A stranger's fresh click goes through (and changes nothing: not theirs to approve);
    // its pair, replayed at once with the approver's userId, is refused.
    let fresh = (now_ms() - 1).to_string();
    let fresh_sign = sign::card_callback_sign(CLIENT_SECRET, &fresh);
    let (status, _) = card_signed(
        &app,
        &click(&out_track_id, "stranger", "once"),
        &fresh,
        &fresh_sign,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = card_signed(&app, &forged, &fresh, &fresh_sign).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(item_state(&app, &item).await, InboxItemState::Pending);

    // The approver's own fresh click approves.
    let (status, answer) = card(&app, &click(&out_track_id, "boss", "once"), CLIENT_SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["cardData"]["cardParamMap"]["status"], "approved",
        "{answer:#}"
    );
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
