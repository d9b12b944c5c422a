//! DingTalk as the chat layer knows it: [`DINGTALK`].

use std::time::Duration;

use workmate_adapter::{ChatPlatform, plain_chat_id};
use workmate_protocol::Surface;

/// DingTalk's fixed facts.
///
/// A delivery is remembered for two hours: Stream re-pushes an un-acked message after about 60 s
/// and the SDK caches acks for 5 min, but a robot callback is accepted for 1 h after its timestamp
/// (reference §0), so a replay can come an hour late.
pub const DINGTALK: ChatPlatform = ChatPlatform {
    surface: Surface::Dingtalk,
    label: "DingTalk",
    target_names: &["dingtalk"],
    chat_id: plain_chat_id,
    dedupe_window: Duration::from_secs(2 * 60 * 60),
};
