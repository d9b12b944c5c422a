//! WeCom as the chat layer knows it: [`WECOM`].

use std::time::Duration;

use workmate_adapter::{ChatPlatform, plain_chat_id};
use workmate_protocol::Surface;

/// WeCom's fixed facts.
///
/// A delivery is remembered for four hours: WeCom documents no retry schedule, but the smart robot
/// keeps a nonce unique for 2 h (reference §0 "Replay window"), so a redelivery can come at least
/// that late. Twice that.
pub const WECOM: ChatPlatform = ChatPlatform {
    surface: Surface::Wecom,
    label: "WeCom",
    target_names: &["wecom"],
    chat_id: plain_chat_id,
    dedupe_window: Duration::from_secs(4 * 60 * 60),
};
