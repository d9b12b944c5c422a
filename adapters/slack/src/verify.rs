//! Slack's v0 request signing.
//!
//! Invariant: a request is accepted only if `X-Slack-Signature` is *exactly* the string
//! `"v0=" + lowercase_hex(HMAC-SHA256(signing_secret, "v0:" + timestamp + ":" + raw_body))` and
//! the timestamp is at most [`MAX_CLOCK_SKEW_SECS`] away from `now`, in either direction.
//! This is what `slack_sdk`'s `SignatureVerifier` does (the reference the fixtures were produced
//! with); in particular upper-case hex is rejected, because that SDK compares strings, and Slack
//! only ever sends lower-case. The body is the raw bytes as received: never re-serialise it.
//!
//! Nothing here panics, whatever the headers contain; the clock is a parameter so that callers
//! and tests decide what "now" is.

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Largest accepted distance between the request timestamp and `now` (slack_sdk: `60 * 5`).
pub const MAX_CLOCK_SKEW_SECS: u64 = 300;

/// Prefix of the signature header; `v0` is the only version Slack has defined.
pub const SIGNATURE_PREFIX: &str = "v0=";

/// Hex digits in a SHA-256 MAC.
const SIGNATURE_HEX_LEN: usize = 64;

/// SHA-256 block size in bytes; HMAC pads (or first hashes) the key to this length.
const SHA256_BLOCK_LEN: usize = 64;

/// Why a request failed verification. Every variant means "reject with 401"; they differ only so
/// that logs say what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// `X-Slack-Request-Timestamp` is not a plain decimal number of seconds.
    #[error("X-Slack-Request-Timestamp is not a decimal Unix time in seconds")]
    MalformedTimestamp,
    /// The timestamp is too far from the verifier's clock (replay protection).
    #[error(
        "request timestamp {timestamp} is {skew_secs} s from now ({now}); at most {MAX_CLOCK_SKEW_SECS} s is accepted"
    )]
    StaleTimestamp {
        /// The parsed header value.
        timestamp: i64,
        /// The verifier's clock.
        now: i64,
        /// `|now - timestamp|`.
        skew_secs: u64,
    },
    /// `X-Slack-Signature` does not start with `v0=`.
    #[error("X-Slack-Signature does not start with \"v0=\"")]
    MissingVersionPrefix,
    /// The part after `v0=` is not 64 characters long.
    #[error(
        "X-Slack-Signature has {len} bytes after \"v0=\"; a SHA-256 signature has 64 hex digits"
    )]
    SignatureLength {
        /// Length in bytes of what followed `v0=`.
        len: usize,
    },
    /// The part after `v0=` has a character outside `[0-9a-f]` (upper-case hex included).
    #[error("X-Slack-Signature is not lower-case hex")]
    NotLowercaseHex,
    /// Well-formed, but not the signature of this body with this secret and timestamp.
    #[error("X-Slack-Signature does not match the request")]
    SignatureMismatch,
}

/// Checks a request against its `X-Slack-Request-Timestamp` and `X-Slack-Signature` headers.
///
/// `body` must be the raw bytes as received, before any JSON or form decoding.
/// `now_unix` is the verifier's clock in Unix seconds.
pub fn verify_request(
    signing_secret: &[u8],
    timestamp_header: &str,
    signature_header: &str,
    body: &[u8],
    now_unix: i64,
) -> Result<(), VerifyError> {
    let timestamp = parse_timestamp(timestamp_header)?;
    let skew_secs = now_unix.abs_diff(timestamp);
    if skew_secs > MAX_CLOCK_SKEW_SECS {
        return Err(VerifyError::StaleTimestamp {
            timestamp,
            now: now_unix,
            skew_secs,
        });
    }

    let hex_part = signature_header
        .strip_prefix(SIGNATURE_PREFIX)
        .ok_or(VerifyError::MissingVersionPrefix)?;
    if hex_part.len() != SIGNATURE_HEX_LEN {
        return Err(VerifyError::SignatureLength {
            len: hex_part.len(),
        });
    }
    // Only the attacker-supplied header is inspected here, so an early exit leaks nothing.
    if !hex_part
        .bytes()
        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(VerifyError::NotLowercaseHex);
    }

    let expected = hex::encode(mac(signing_secret, timestamp_header, body));
    if bool::from(expected.as_bytes().ct_eq(hex_part.as_bytes())) {
        Ok(())
    } else {
        Err(VerifyError::SignatureMismatch)
    }
}

/// The `X-Slack-Signature` value Slack would send for this request: `v0=` + lower-case hex.
///
/// `timestamp` is used verbatim, as the header carries it.
pub fn sign(signing_secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    let mut out = String::with_capacity(SIGNATURE_PREFIX.len() + SIGNATURE_HEX_LEN);
    out.push_str(SIGNATURE_PREFIX);
    out.push_str(&hex::encode(mac(signing_secret, timestamp, body)));
    out
}

/// Accepts ASCII digits only: `i64::from_str` would also take a leading `+`, which no Slack
/// request carries.
fn parse_timestamp(header: &str) -> Result<i64, VerifyError> {
    if header.is_empty() || !header.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VerifyError::MalformedTimestamp);
    }
    header
        .parse::<i64>()
        .map_err(|_| VerifyError::MalformedTimestamp)
}

/// HMAC-SHA256 over `v0:{timestamp}:{body}`, fed in pieces so the body is never copied.
fn mac(signing_secret: &[u8], timestamp: &str, body: &[u8]) -> [u8; 32] {
    let mut mac = <hmac::Hmac<Sha256> as KeyInit>::new(&block_key(signing_secret).into());
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

/// The key as HMAC uses it (RFC 2104 §2): hashed when longer than a block, then zero-padded to
/// a block. Feeding this block-sized key to `Hmac::new` gives the same MAC as `new_from_slice`
/// with the raw secret, without that constructor's `Result`, which can never be `Err` for HMAC.
fn block_key(secret: &[u8]) -> [u8; SHA256_BLOCK_LEN] {
    let mut key = [0u8; SHA256_BLOCK_LEN];
    if secret.len() > SHA256_BLOCK_LEN {
        let digest = Sha256::digest(secret);
        key[..digest.len()].copy_from_slice(&digest);
    } else {
        key[..secret.len()].copy_from_slice(secret);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_mac(key: &[u8], data: &[u8]) -> String {
        let mut mac = <hmac::Hmac<Sha256> as KeyInit>::new(&block_key(key).into());
        mac.update(data);
        hex::encode(mac.finalize().into_bytes())
    }

    // RFC 4231 test cases 1, 2 and 6 cover a short key, a key shorter than the data, and a key
    // longer than the block (which must be hashed first).
    #[test]
    fn block_key_matches_rfc_4231() {
        assert_eq!(
            hex_mac(&[0x0b; 20], b"Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex_mac(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex_mac(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn key_of_exactly_one_block_is_not_hashed() {
        let key = [0x42u8; SHA256_BLOCK_LEN];
        let mut reference = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(&key).unwrap();
        reference.update(b"data");
        assert_eq!(
            hex_mac(&key, b"data"),
            hex::encode(reference.finalize().into_bytes())
        );
    }

    #[test]
    fn timestamp_parser_is_strict() {
        for bad in [
            "",
            "+1",
            "-1",
            " 1",
            "1 ",
            "1.0",
            "0x10",
            "99999999999999999999",
            "١٢",
        ] {
            assert_eq!(
                parse_timestamp(bad),
                Err(VerifyError::MalformedTimestamp),
                "{bad:?}"
            );
        }
        assert_eq!(parse_timestamp("0"), Ok(0));
        assert_eq!(parse_timestamp("1531420618"), Ok(1_531_420_618));
    }
}
