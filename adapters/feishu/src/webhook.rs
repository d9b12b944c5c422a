//! Webhook mode: opening a request to `/v1/platforms/feishu/events` or `/card`.
//!
//! Rules, in order:
//! 1. A signed request is verified before anything is decrypted: with an Encrypt Key,
//!    `X-Lark-Signature` (SHA-256 over timestamp, nonce, key and the raw body) must match;
//!    without one, a legacy card callback's SHA-1 over the Verification Token. Its
//!    `X-Lark-Request-Timestamp` must be within [`MAX_AGE_S`] of the clock.
//! 2. A body `{"encrypt": …}` is then decrypted with the Encrypt Key (refused without one). An
//!    unsigned one is accepted only as the URL verification handshake, which Feishu sends
//!    unsigned; having decrypted it proves the sender knows the key.
//! 3. Without an Encrypt Key, everything else must carry the Verification Token.
//! 4. Where a Verification Token is configured, the envelope's token must equal it, always.
//!
//! Invariants: [`WebhookAuth::open`] returns a decoded envelope only for a request that passed
//! every rule that applies; the comparison of secrets runs in constant time; an unverified
//! request's failures are all [`WebhookError::is_refusal`] and the HTTP layer answers them all
//! alike, so altered ciphertext teaches the sender nothing (no padding oracle).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::crypto::{self, CryptoError};
use crate::inbound::{self, DecodeError, Envelope};

/// The three signature headers of a request.
#[derive(Clone, Copy, Debug, Default)]
pub struct Signed<'a> {
    /// `X-Lark-Request-Timestamp`.
    pub timestamp: &'a str,
    /// `X-Lark-Request-Nonce`.
    pub nonce: &'a str,
    /// `X-Lark-Signature`.
    pub signature: &'a str,
}

/// How far a signed request's timestamp may be from the clock, either way.
pub const MAX_AGE_S: i64 = 300;

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The signature verified, but the request is older (or newer) than [`MAX_AGE_S`].
    #[error("the request's X-Lark-Request-Timestamp is more than 5 minutes from the clock")]
    Stale,
    /// The signature or decryption failed.
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    /// The body decrypted and verified, but is not what Feishu sends.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The body is encrypted but no Encrypt Key is configured.
    #[error("the request is encrypted, but no encrypt_key is configured for Feishu")]
    NoEncryptKey,
    /// The envelope's Verification Token is not the configured one.
    #[error("the request's verification token does not match verification_token")]
    BadToken,
    /// Neither a signature nor a token could be checked.
    #[error("the request carries nothing to check it by (no signature, no verification token)")]
    Unauthenticated,
}

/// The secrets that authenticate Feishu's requests.
#[derive(Clone, Debug, Default)]
pub struct WebhookAuth {
    encrypt_key: Option<String>,
    /// The Encrypt Key's AES key schedule, derived once.
    decrypter: Option<crypto::Decrypter>,
    verification_token: Option<String>,
}

/// The few top-level fields that decide how a body is opened.
#[derive(Deserialize)]
struct Outer<'a> {
    #[serde(default, borrow)]
    encrypt: Option<Cow<'a, str>>,
    #[serde(default)]
    schema: Option<IgnoredAny>,
    #[serde(default)]
    action: Option<IgnoredAny>,
}

/// The base64 of a body that is exactly `{"encrypt":"…"}`, as Feishu sends every encrypted
/// one, found without a JSON parse (base64 has no quote or backslash to unescape). Any other
/// shape is left to the parser.
fn sealed_only(body: &str) -> Option<&str> {
    let sealed = body.strip_prefix("{\"encrypt\":\"")?.strip_suffix("\"}")?;
    // Some encoders write `/` as `\/`: such a body goes through the parser. The scan reads every
    // byte without stopping early, which lets it run many bytes per step (an early exit reads
    // one at a time, which costs more than decrypting).
    let escaped = sealed
        .as_bytes()
        .iter()
        .fold(0_u8, |seen, &b| seen | u8::from(b == b'"' || b == b'\\'));
    (escaped == 0).then_some(sealed)
}

impl WebhookAuth {
    /// Checks requests with these secrets; at least one should be set.
    pub fn new(encrypt_key: Option<String>, verification_token: Option<String>) -> Self {
        let non_empty = |s: Option<String>| s.filter(|s| !s.is_empty());
        let encrypt_key = non_empty(encrypt_key);
        Self {
            decrypter: encrypt_key.as_deref().map(crypto::Decrypter::new),
            encrypt_key,
            verification_token: non_empty(verification_token),
        }
    }

    /// Verifies, decrypts and decodes one request body, now. An encrypted body is decrypted
    /// into `plaintext`, which the envelope then borrows from (as it borrows from `body`
    /// otherwise).
    pub fn open<'a>(
        &self,
        signed: Signed<'_>,
        body: &'a [u8],
        plaintext: &'a mut String,
    ) -> Result<Envelope<'a>, WebhookError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        self.open_at(signed, body, plaintext, now)
    }

    /// [`WebhookAuth::open`] with the clock at `now` (Unix seconds).
    pub fn open_at<'a>(
        &self,
        signed: Signed<'_>,
        body: &'a [u8],
        plaintext: &'a mut String,
        now: i64,
    ) -> Result<Envelope<'a>, WebhookError> {
        let body_text = std::str::from_utf8(body)
            .map_err(|e| DecodeError(format!("the body is not JSON: not UTF-8 ({e})")))?;
        let outer = match sealed_only(body_text) {
            Some(sealed) => Outer {
                encrypt: Some(Cow::Borrowed(sealed)),
                schema: None,
                action: None,
            },
            None => serde_json::from_str(body_text)
                .map_err(|e| DecodeError(format!("the body is not JSON: {e}")))?,
        };
        let encrypted = outer.encrypt.is_some();
        let legacy_card = !encrypted && outer.schema.is_none() && outer.action.is_some();
        let signature_given = !signed.signature.is_empty();
        // 1. What is signed is verified first, on the raw body: nothing is decrypted for an
        //    unverified sender, so altered ciphertext teaches it nothing.
        let verified = match (&self.encrypt_key, &self.verification_token) {
            (Some(_), _) if legacy_card && signed.signature.len() == 40 => {
                self.check_legacy_card(signed, body)?;
                true
            }
            (Some(key), _) if signature_given => {
                crypto::verify(signed.timestamp, signed.nonce, key, body, signed.signature)?;
                true
            }
            (None, Some(_)) if legacy_card && signature_given => {
                self.check_legacy_card(signed, body)?;
                true
            }
            (None, None) => return Err(WebhookError::Unauthenticated),
            _ => false,
        };
        if verified && !fresh(signed.timestamp, now) {
            return Err(WebhookError::Stale);
        }
        // 2. Decrypt; an unsigned encrypted body may only be the URL verification handshake.
        if let Some(sealed) = outer.encrypt.as_deref() {
            let decrypter = self.decrypter.as_ref().ok_or(WebhookError::NoEncryptKey)?;
            *plaintext = decrypter.decrypt(sealed)?;
        }
        let decoded = if encrypted {
            inbound::decode_str(plaintext)
        } else {
            inbound::decode_str(body_text)
        };
        let envelope = match decoded {
            Ok(envelope) => envelope,
            // An unverified sender learns no more from a body that decrypted than from one
            // that did not.
            Err(_) if encrypted && !verified => {
                return Err(WebhookError::Crypto(CryptoError::MissingSignature));
            }
            Err(e) => return Err(e.into()),
        };
        let is_challenge = matches!(envelope, Envelope::Challenge { .. });
        if self.encrypt_key.is_some() && !verified && !is_challenge {
            return Err(WebhookError::Crypto(CryptoError::MissingSignature));
        }
        if let Some(expected) = &self.verification_token {
            let carried = match &envelope {
                Envelope::Challenge { token, .. } => token.as_deref(),
                Envelope::Event { meta, .. } => meta.token.as_deref(),
            };
            // A legacy card callback carries no token in its body: its signature covered it.
            let checked_by_signature = legacy_card && !signed.signature.is_empty();
            if !checked_by_signature && !carried.is_some_and(|t| crypto::same_secret(expected, t)) {
                return Err(WebhookError::BadToken);
            }
        }
        Ok(envelope)
    }

    /// Whether `error` is a refusal of the sender (its signature, age, key or token), which
    /// must be answered alike whatever it was, rather than a verified body that is malformed.
    pub fn is_refusal(error: &WebhookError) -> bool {
        !matches!(error, WebhookError::Decode(_))
    }

    fn check_legacy_card(&self, signed: Signed<'_>, body: &[u8]) -> Result<(), WebhookError> {
        let token = self
            .verification_token
            .as_deref()
            .ok_or(WebhookError::Unauthenticated)?;
        crypto::verify_card_v1(
            signed.timestamp,
            signed.nonce,
            token,
            body,
            signed.signature,
        )?;
        Ok(())
    }
}

/// Whether a signed request's timestamp is within [`MAX_AGE_S`] of `now`.
fn fresh(timestamp: &str, now: i64) -> bool {
    timestamp
        .trim()
        .parse::<i64>()
        .is_ok_and(|at| (now - at).abs() <= MAX_AGE_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "encrypt-key";
    const TOKEN: &str = "verification-token";
    const PLAINTEXT: &str = r#"{"schema":"2.0","header":{"event_id":"ev_1","event_type":"x.y","token":"verification-token"},"event":{}}"#;

    /// `PLAINTEXT` sealed so that its base64 has a `/`, which some encoders escape.
    fn sealed_with_slash() -> String {
        (0..=u8::MAX)
            .map(|i| crypto::encrypt_with(KEY, [i; 16], PLAINTEXT))
            .find(|sealed| sealed.contains('/'))
            .unwrap()
    }

    /// The event id of `body` opened with a signature over `signed_body`.
    fn open(body: &str, signed_body: &str) -> Result<String, WebhookError> {
        let auth = WebhookAuth::new(Some(KEY.into()), Some(TOKEN.into()));
        let signature = crypto::signature("1700000000", "nonce", KEY, signed_body.as_bytes());
        let signed = Signed {
            timestamp: "1700000000",
            nonce: "nonce",
            signature: &signature,
        };
        let mut plaintext = String::new();
        match auth.open_at(signed, body.as_bytes(), &mut plaintext, 1_700_000_100)? {
            Envelope::Event { meta, .. } => Ok(meta.event_id.into_owned()),
            Envelope::Challenge { .. } => panic!("not an event"),
        }
    }

    #[test]
    fn a_sealed_body_opens_however_its_json_is_written() {
        let sealed = sealed_with_slash();
        for body in [
            format!(r#"{{"encrypt":"{sealed}"}}"#),
            format!(r#"{{"encrypt":"{}"}}"#, sealed.replace('/', "\\/")),
            format!(r#"{{ "encrypt": "{sealed}" }}"#),
            format!(r#"{{"encrypt":"{sealed}","note":"x"}}"#),
        ] {
            assert_eq!(open(&body, &body).as_deref(), Ok("ev_1"), "{body}");
        }
    }

    #[test]
    fn a_sealed_body_signed_as_another_is_refused() {
        let sealed = sealed_with_slash();
        let body = format!(r#"{{"encrypt":"{sealed}"}}"#);
        let escaped = format!(r#"{{"encrypt":"{}"}}"#, sealed.replace('/', "\\/"));
        assert_eq!(
            open(&body, &escaped),
            Err(WebhookError::Crypto(CryptoError::SignatureMismatch))
        );
        assert_eq!(open(&escaped, &escaped).as_deref(), Ok("ev_1"));
    }

    #[test]
    fn a_signed_request_older_than_five_minutes_is_refused() {
        let auth = WebhookAuth::new(Some(KEY.into()), Some(TOKEN.into()));
        let body = format!(
            r#"{{"encrypt":"{}"}}"#,
            crypto::encrypt_with(KEY, [7; 16], PLAINTEXT)
        );
        let signature = crypto::signature("1700000000", "nonce", KEY, body.as_bytes());
        let signed = Signed {
            timestamp: "1700000000",
            nonce: "nonce",
            signature: &signature,
        };
        let mut plaintext = String::new();
        let day_later = 1_700_000_000 + 86_400;
        let stale = auth.open_at(signed, body.as_bytes(), &mut plaintext, day_later);
        assert_eq!(stale.err(), Some(WebhookError::Stale));
        let mut plaintext = String::new();
        let fresh = auth.open_at(signed, body.as_bytes(), &mut plaintext, 1_700_000_200);
        assert!(fresh.is_ok(), "the same request within the window opens");
    }

    #[test]
    fn altered_ciphertext_is_refused_before_it_is_decrypted() {
        let auth = WebhookAuth::new(Some(KEY.into()), Some(TOKEN.into()));
        let sealed = crypto::encrypt_with(KEY, [7; 16], PLAINTEXT);
        let original = format!(r#"{{"encrypt":"{sealed}"}}"#);
        let signature = crypto::signature("1700000000", "nonce", KEY, original.as_bytes());
        // Every flipped character of the ciphertext, signed or not, fails alike: a refusal
        // (never a padding or UTF-8 error that would tell one alteration from another).
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..sealed.len() {
            let mut bytes = sealed.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let altered = format!(r#"{{"encrypt":"{}"}}"#, String::from_utf8(bytes).unwrap());
            for signature in [signature.as_str(), ""] {
                let signed = Signed {
                    timestamp: "1700000000",
                    nonce: "nonce",
                    signature,
                };
                let mut plaintext = String::new();
                let error = auth
                    .open_at(signed, altered.as_bytes(), &mut plaintext, 1_700_000_000)
                    .unwrap_err();
                assert!(WebhookAuth::is_refusal(&error), "{error}");
                if !signature.is_empty() {
                    assert!(
                        plaintext.is_empty(),
                        "nothing is decrypted for a bad signature"
                    );
                    seen.insert(error.to_string());
                }
            }
        }
        assert_eq!(seen.len(), 1, "{seen:?}");
    }
}
