//! Inbound event dedupe: every platform delivers at least once.
//!
//! Invariant: an event id is processed once as long as its redeliveries arrive within its TTL, so
//! each platform's TTL is longer than its whole retry window (reference `chat-platforms.md` §0
//! "Retries" and consequence 2). The sightings live in the store, so every replica sees them.

use std::time::Duration;

use workmate_protocol::TenantId;
use workmate_store::Store;

use crate::{Error, Result};

/// Platform name of Slack, as stored with dedupe rows and card messages.
pub const SLACK: &str = "slack";
/// Platform name of Feishu / Lark.
pub const FEISHU: &str = "feishu";
/// Platform name of WeCom.
pub const WECOM: &str = "wecom";
/// Platform name of DingTalk.
pub const DINGTALK: &str = "dingtalk";

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

/// For a platform this table does not know: the longest of the above.
pub const FALLBACK_DEDUPE_TTL: Duration = FEISHU_DEDUPE_TTL;

/// The dedupe TTL for `platform` (one of the names above; any other gets the fallback).
pub fn dedupe_ttl(platform: &str) -> Duration {
    match platform {
        SLACK => SLACK_DEDUPE_TTL,
        FEISHU => FEISHU_DEDUPE_TTL,
        WECOM => WECOM_DEDUPE_TTL,
        DINGTALK => DINGTALK_DEDUPE_TTL,
        _ => FALLBACK_DEDUPE_TTL,
    }
}

/// Records a delivery of `event_id`; `true` if it is the first within `ttl` (process it), `false`
/// for a redelivery (acknowledge it and do nothing). Of concurrent deliveries, exactly one is
/// first, on any replica. `ttl` must be positive; pass [`dedupe_ttl`] unless you know better.
pub async fn first_delivery(
    store: &Store,
    tenant: &TenantId,
    platform: &str,
    event_id: &str,
    ttl: Duration,
) -> Result<bool> {
    if ttl.is_zero() {
        // A zero TTL would make every redelivery look new: a silent double-processing bug.
        return Err(Error::Invalid("dedupe TTL must be positive".to_owned()));
    }
    let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    Ok(store
        .dedupe()
        .first_sighting(tenant, platform, event_id, ttl_ms)
        .await?)
}
