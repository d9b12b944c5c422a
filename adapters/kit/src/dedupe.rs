//! How long a delivery is remembered when no platform says: each platform's own window is in
//! its [`crate::ChatPlatform`] descriptor.
//!
//! Invariant: every window is longer than its platform's whole retry schedule (reference
//! `chat-platforms.md` §0 "Retries"), so a late redelivery still finds its first delivery.

use std::time::Duration;

/// For a delivery whose platform is not registered: the longest platform window (Feishu's).
pub const FALLBACK_DEDUPE_WINDOW: Duration = Duration::from_secs(12 * 60 * 60);
