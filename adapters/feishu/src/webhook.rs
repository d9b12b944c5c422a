//! Webhook mode: opening a request to `/v1/platforms/feishu/events` or `/card`.
//!
//! Rules, in order:
//! 1. A body `{"encrypt": …}` is decrypted with the Encrypt Key (refused without one).
//! 2. With an Encrypt Key configured, `X-Lark-Signature` (SHA-256 over timestamp, nonce, key
//!    and the raw body) must match — except for the URL verification handshake, which Feishu
//!    sends unsigned; having decrypted it proves the sender knows the key.
//! 3. Without an Encrypt Key, a legacy card callback signed with SHA-1 over the Verification
//!    Token is checked that way; everything else must carry the Verification Token.
//! 4. Where a Verification Token is configured, the envelope's token must equal it, always.
//!
//! Invariant: [`WebhookAuth::open`] returns a decoded envelope only for a request that passed
//! every rule that applies; the comparison of secrets runs in constant time.

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

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
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

    /// Verifies, decrypts and decodes one request body. An encrypted body is decrypted into
    /// `plaintext`, which the envelope then borrows from (as it borrows from `body` otherwise).
    pub fn open<'a>(
        &self,
        signed: Signed<'_>,
        body: &'a [u8],
        plaintext: &'a mut String,
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
        let encrypted = match (outer.encrypt.as_deref(), &self.decrypter) {
            (Some(_), None) => return Err(WebhookError::NoEncryptKey),
            (Some(sealed), Some(decrypter)) => {
                *plaintext = decrypter.decrypt(sealed)?;
                true
            }
            (None, _) => false,
        };
        let envelope = if encrypted {
            inbound::decode_str(plaintext)?
        } else {
            inbound::decode_str(body_text)?
        };
        let is_challenge = matches!(envelope, Envelope::Challenge { .. });
        let legacy_card = !encrypted && outer.schema.is_none() && outer.action.is_some();
        match (&self.encrypt_key, &self.verification_token) {
            (Some(key), _) if !(is_challenge && signed.signature.is_empty()) => {
                if legacy_card && signed.signature.len() == 40 {
                    self.check_legacy_card(signed, body)?;
                } else {
                    crypto::verify(signed.timestamp, signed.nonce, key, body, signed.signature)?;
                }
            }
            (None, Some(_)) if legacy_card && !signed.signature.is_empty() => {
                self.check_legacy_card(signed, body)?;
            }
            (None, None) => return Err(WebhookError::Unauthenticated),
            _ => {}
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
        match auth.open(signed, body.as_bytes(), &mut plaintext)? {
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
}
