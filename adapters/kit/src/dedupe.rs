//! How long each platform's deliveries are remembered, so a redelivery is recognised.
//!
//! Invariant: every platform's window is longer than its whole retry schedule (reference
//! `chat-platforms.md` §0 "Retries"), so a late redelivery still finds its first delivery.

use std::time::Duration;

use workmate_protocol::Surface;

const MINUTE: u64 = 60;
const HOUR: u64 = 60 * MINUTE;

/// Slack: 3 retries, at once, +1 min and +5 min, so the last delivery comes about 6 min after the
/// first (reference §1a; §0 says "about 10 min"). One hour leaves room for a slow or queued retry.
pub const SLACK_DEDUPE_TTL: Duration = Duration::from_secs(HOUR);

/// Feishu: 4 retries at 15 s, 5 min, 1 h and 6 h, a window of about 7.1 h (reference §0).
/// Twelve hours covers it with margin.
pub const FEISHU_DEDUPE_TTL: Duration = Duration::from_secs(12 * HOUR);

/// WeCom: no retry schedule is documented; the smart robot keeps a nonce unique for 2 h
/// (reference §0 "Replay window"), so a redelivery can come at least that late. Twice that.
pub const WECOM_DEDUPE_TTL: Duration = Duration::from_secs(4 * HOUR);

/// DingTalk: Stream re-pushes an un-acked message after about 60 s and the SDK caches acks for
/// 5 min, but a robot callback is accepted for 1 h after its timestamp (reference §0), so a replay
/// can come an hour late. Two hours.
pub const DINGTALK_DEDUPE_TTL: Duration = Duration::from_secs(2 * HOUR);

/// For a surface that is not a chat platform: the longest of the above.
pub const FALLBACK_DEDUPE_TTL: Duration = FEISHU_DEDUPE_TTL;

/// How long `surface`'s deliveries are remembered.
pub fn dedupe_ttl(surface: Surface) -> Duration {
    match surface {
        Surface::Slack | Surface::Sandbox => SLACK_DEDUPE_TTL,
        Surface::Feishu => FEISHU_DEDUPE_TTL,
        Surface::Wecom => WECOM_DEDUPE_TTL,
        Surface::Dingtalk => DINGTALK_DEDUPE_TTL,
        Surface::Http | Surface::Companion | Surface::Scheduler | Surface::System => {
            FALLBACK_DEDUPE_TTL
        }
    }
}
