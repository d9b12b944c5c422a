//! Feishu as the chat layer knows it: [`FEISHU`].

use std::time::Duration;

use workmate_adapter::{ChatPlatform, plain_chat_id};
use workmate_protocol::Surface;

/// Feishu's fixed facts.
///
/// A delivery is remembered for twelve hours: Feishu retries 4 times, after 15 s, 5 min, 1 h and 6
/// h, a window of about 7.1 h (reference §0).
pub const FEISHU: ChatPlatform = ChatPlatform {
    surface: Surface::Feishu,
    label: "Feishu",
    target_names: &["feishu", "lark"],
    chat_id: plain_chat_id,
    dedupe_window: Duration::from_secs(12 * 60 * 60),
};
