//! Slack as the chat layer knows it: [`SLACK`].

use std::time::Duration;

use workmate_adapter::{ChatPlatform, plain_chat_id};
use workmate_protocol::Surface;

/// Slack's fixed facts.
///
/// A delivery is remembered for an hour: Slack retries 3 times, at once, after 1 min and after 5
/// min, so the last delivery comes about 6 min after the first (reference §1a; §0 says "about 10
/// min"). An hour leaves room for a slow or queued retry.
pub const SLACK: ChatPlatform = ChatPlatform {
    surface: Surface::Slack,
    label: "Slack",
    target_names: &["slack"],
    chat_id: plain_chat_id,
    dedupe_window: Duration::from_secs(60 * 60),
};
