//! DingTalk's robot signature: `base64(HMAC-SHA256(key = secret, msg = timestamp_ms + "\n" +
//! secret))`, the timestamp in milliseconds.
//!
//! - Outgoing: a custom robot's webhook URL carries `&timestamp=…&sign=…` (the sign URL-encoded).
//! - Incoming: a robot's HTTP callback carries `timestamp` and `sign` headers, signed with the
//!   app's AppSecret. It is accepted only when the timestamp is within one hour of now, in either
//!   direction, and the header is exactly the base64 signature (compared in constant time; not
//!   URL-encoded).
//! - Interactive-card callbacks over HTTP carry `x-ddpaas-signature-timestamp` and
//!   `x-ddpaas-signature`: `base64(HMAC-SHA256(key = apiSecret, msg = timestamp))`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// How far a robot callback's timestamp may be from now, either way, in milliseconds (the
/// window DingTalk documents).
pub const MAX_SKEW_MS: i64 = 60 * 60 * 1000;
/// How far a card callback's timestamp may be from now, either way, in milliseconds: its
/// signature covers nothing but the timestamp, so it is believed for five minutes at most.
pub const MAX_CARD_SKEW_MS: i64 = 5 * 60 * 1000;

/// Why a callback's signature was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignError {
    /// The `timestamp` header is not a number of milliseconds.
    #[error("the timestamp header {0:?} is not a time in milliseconds")]
    BadTimestamp(String),
    /// The timestamp is further from now than the callback's window.
    #[error(
        "the callback's timestamp is {skew_ms} ms from now, outside its window (a replay, or this \
         server's clock is wrong)"
    )]
    Stale {
        /// How far it is, in milliseconds.
        skew_ms: i64,
    },
    /// No `sign` header came.
    #[error("the callback carries no sign header")]
    Missing,
    /// The signature does not match.
    #[error("the callback's sign does not match (check the app's AppSecret)")]
    Mismatch,
}

/// The robot signature of `timestamp_ms` (base64, not URL-encoded).
pub fn robot_sign(secret: &str, timestamp_ms: &str) -> String {
    hmac_base64(secret, &[timestamp_ms.as_bytes(), b"\n", secret.as_bytes()])
}

/// The `x-ddpaas-signature` of an interactive-card callback sent at `timestamp`.
pub fn card_callback_sign(api_secret: &str, timestamp: &str) -> String {
    hmac_base64(api_secret, &[timestamp.as_bytes()])
}

/// Checks an interactive-card callback's `x-ddpaas-signature` and that its timestamp (Unix
/// milliseconds) is within [`MAX_CARD_SKEW_MS`] of `now_ms`.
pub fn verify_card_callback_at(
    api_secret: &str,
    timestamp: &str,
    sign: &str,
    now_ms: i64,
) -> Result<(), SignError> {
    verify_card_callback(api_secret, timestamp, sign)?;
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| SignError::BadTimestamp(timestamp.to_owned()))?;
    let skew_ms = now_ms.saturating_sub(at).saturating_abs();
    if skew_ms > MAX_CARD_SKEW_MS {
        return Err(SignError::Stale { skew_ms });
    }
    Ok(())
}

/// Checks an interactive-card callback's `x-ddpaas-signature` (exact, in constant time).
pub fn verify_card_callback(
    api_secret: &str,
    timestamp: &str,
    sign: &str,
) -> Result<(), SignError> {
    if sign.is_empty() {
        return Err(SignError::Missing);
    }
    let expected = card_callback_sign(api_secret, timestamp);
    if bool::from(expected.as_bytes().ct_eq(sign.as_bytes())) {
        Ok(())
    } else {
        Err(SignError::Mismatch)
    }
}

/// `base64(HMAC-SHA256(key, parts concatenated))`.
fn hmac_base64(key: &str, parts: &[&[u8]]) -> String {
    // HMAC takes a key of any length, so this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else {
        return String::new();
    };
    for part in parts {
        mac.update(part);
    }
    BASE64.encode(mac.finalize().into_bytes())
}

/// Checks a robot callback's `timestamp` and `sign` headers against the AppSecret at `now_ms`.
pub fn verify_callback(
    secret: &str,
    timestamp_ms: &str,
    sign: &str,
    now_ms: i64,
) -> Result<(), SignError> {
    if sign.is_empty() {
        return Err(SignError::Missing);
    }
    let timestamp: i64 = timestamp_ms
        .trim()
        .parse()
        .map_err(|_| SignError::BadTimestamp(timestamp_ms.to_owned()))?;
    let skew_ms = now_ms.saturating_sub(timestamp).saturating_abs();
    if skew_ms > MAX_SKEW_MS {
        return Err(SignError::Stale { skew_ms });
    }
    let expected = robot_sign(secret, timestamp_ms);
    if bool::from(expected.as_bytes().ct_eq(sign.as_bytes())) {
        Ok(())
    } else {
        Err(SignError::Mismatch)
    }
}

/// A custom robot's webhook URL with its `timestamp` and URL-encoded `sign` appended.
pub fn signed_webhook_url(webhook_url: &str, secret: &str, timestamp_ms: &str) -> String {
    let sign = robot_sign(secret, timestamp_ms);
    let encoded: String = sign
        .chars()
        .map(|c| match c {
            '+' => "%2B".to_owned(),
            '/' => "%2F".to_owned(),
            '=' => "%3D".to_owned(),
            c => c.to_string(),
        })
        .collect();
    let joiner = if webhook_url.contains('?') { '&' } else { '?' };
    format!("{webhook_url}{joiner}timestamp={timestamp_ms}&sign={encoded}")
}
