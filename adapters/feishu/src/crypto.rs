//! Feishu's event encryption and request signatures.
//!
//! - Encryption (an app with an Encrypt Key): the body is `{"encrypt":"<base64>"}`; the key is
//!   SHA-256 of the Encrypt Key, the first 16 decoded bytes are the IV, the rest is AES-256-CBC
//!   with PKCS#7 padding to 16-byte blocks.
//! - Event signature: `X-Lark-Signature` is the lower-case hex SHA-256 of timestamp, nonce,
//!   Encrypt Key and the raw body, concatenated (a plain hash, not an HMAC).
//! - Legacy card-callback signature (the old "message card request URL", no Encrypt Key): the
//!   hex SHA-1 of timestamp, nonce, Verification Token and the raw body.
//!
//! Invariants: a ciphertext is accepted only when it is whole blocks after the IV and every
//! padding byte checks, so a body encrypted under another key is refused rather than decoded
//! into garbage; signatures are compared as exact strings, in constant time.

use aes::cipher::block_padding::NoPadding;
use aes::cipher::{BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyInit, KeyIvInit};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// AES block size, and the IV's length.
const BLOCK: usize = 16;

type Decryptor = cbc::Decryptor<aes::Aes256Dec>;
type Encryptor = cbc::Encryptor<aes::Aes256>;

/// Why an encrypted body or a signature was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// `encrypt` is not base64.
    #[error("the encrypted body is not base64")]
    NotBase64,
    /// The decoded bytes are not an IV followed by whole AES blocks.
    #[error("the encrypted body is {0} bytes, not a 16-byte IV followed by whole 16-byte blocks")]
    BadLength(usize),
    /// The padding is wrong: the body was encrypted with another Encrypt Key, or altered.
    #[error("the encrypted body does not decrypt with this Encrypt Key (bad padding)")]
    BadPadding,
    /// The plaintext is not UTF-8.
    #[error("the decrypted body is not UTF-8")]
    NotUtf8,
    /// No `X-Lark-Signature` (or no timestamp or nonce) came with a request that needs one.
    #[error(
        "the request carries no X-Lark-Signature, X-Lark-Request-Timestamp and X-Lark-Request-Nonce"
    )]
    MissingSignature,
    /// The signature does not match the body.
    #[error("the X-Lark-Signature does not match the body (check the app's Encrypt Key)")]
    SignatureMismatch,
}

/// The AES key of an Encrypt Key.
fn aes_key(encrypt_key: &str) -> [u8; 32] {
    Sha256::digest(encrypt_key.as_bytes()).into()
}

/// Decrypts the `encrypt` field of an encrypted event or callback body.
pub fn decrypt(encrypt_key: &str, encrypt_b64: &str) -> Result<String, CryptoError> {
    Decrypter::new(encrypt_key).decrypt(encrypt_b64)
}

/// The AES key schedule of one Encrypt Key, derived once and kept by whoever decrypts many
/// bodies with it (deriving it costs about as much as decrypting an event).
#[derive(Clone)]
pub struct Decrypter {
    cipher: aes::Aes256Dec,
}

impl std::fmt::Debug for Decrypter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Decrypter(..)")
    }
}

impl Decrypter {
    /// The key schedule of `encrypt_key`.
    pub fn new(encrypt_key: &str) -> Self {
        Self {
            cipher: aes::Aes256Dec::new(&aes_key(encrypt_key).into()),
        }
    }

    /// Decrypts the `encrypt` field of an encrypted event or callback body.
    pub fn decrypt(&self, encrypt_b64: &str) -> Result<String, CryptoError> {
        let mut raw = BASE64
            .decode(encrypt_b64.trim())
            .map_err(|_| CryptoError::NotBase64)?;
        let total = raw.len();
        if total < 2 * BLOCK || total % BLOCK != 0 {
            return Err(CryptoError::BadLength(total));
        }
        let (iv, ciphertext) = raw.split_at_mut(BLOCK);
        let iv: [u8; BLOCK] = (&*iv)
            .try_into()
            .map_err(|_| CryptoError::BadLength(total))?;
        // Decrypted in place; the IV is dropped from the front afterwards.
        let plain = Decryptor::inner_iv_init(self.cipher.clone(), &iv.into())
            .decrypt_padded::<NoPadding>(ciphertext)
            .map_err(|_| CryptoError::BadLength(total))?;
        let len = unpadded_len(plain).ok_or(CryptoError::BadPadding)?;
        raw.truncate(BLOCK + len);
        raw.drain(..BLOCK);
        String::from_utf8(raw).map_err(|_| CryptoError::NotUtf8)
    }
}

/// The plaintext length once PKCS#7 padding (1..=16, every byte equal to the count) is removed.
fn unpadded_len(plain: &[u8]) -> Option<usize> {
    let pad = usize::from(*plain.last()?);
    if pad == 0 || pad > BLOCK || pad > plain.len() {
        return None;
    }
    let tail = &plain[plain.len() - pad..];
    tail.iter()
        .all(|&b| usize::from(b) == pad)
        .then(|| plain.len() - pad)
}

/// Encrypts `plaintext` as Feishu does, with the given IV: the `encrypt` field of a body. For
/// tests and the sandbox, which play Feishu's part.
pub fn encrypt_with(encrypt_key: &str, iv: [u8; BLOCK], plaintext: &str) -> String {
    let pad = BLOCK - plaintext.len() % BLOCK;
    let mut buf = Vec::with_capacity(BLOCK + plaintext.len() + pad);
    buf.extend_from_slice(&iv);
    buf.extend_from_slice(plaintext.as_bytes());
    buf.extend(std::iter::repeat_n(u8::try_from(pad).unwrap_or(16), pad));
    let key = aes_key(encrypt_key);
    let len = buf.len() - BLOCK;
    let (_, body) = buf.split_at_mut(BLOCK);
    // The body is whole blocks, so encrypting without padding cannot fail.
    if Encryptor::new(&key.into(), &iv.into())
        .encrypt_padded::<NoPadding>(body, len)
        .is_err()
    {
        return String::new();
    }
    BASE64.encode(&buf)
}

/// `X-Lark-Signature` of a request: lower-case hex SHA-256 of
/// `timestamp + nonce + encrypt_key + body`.
pub fn signature(timestamp: &str, nonce: &str, encrypt_key: &str, body: &[u8]) -> String {
    hex::encode(signature_digest(timestamp, nonce, encrypt_key, body))
}

fn signature_digest(timestamp: &str, nonce: &str, encrypt_key: &str, body: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(timestamp.as_bytes());
    hash.update(nonce.as_bytes());
    hash.update(encrypt_key.as_bytes());
    hash.update(body);
    hash.finalize().into()
}

/// Checks `X-Lark-Signature` against the raw body, as an exact string, in constant time.
pub fn verify(
    timestamp: &str,
    nonce: &str,
    encrypt_key: &str,
    body: &[u8],
    signature_header: &str,
) -> Result<(), CryptoError> {
    if signature_header.is_empty() {
        return Err(CryptoError::MissingSignature);
    }
    // Hex on the stack rather than in a String: this runs on every event. 32 bytes are always
    // 64 digits, so the encoding cannot fail.
    let mut expected = [0; 64];
    hex::encode_to_slice(
        signature_digest(timestamp, nonce, encrypt_key, body),
        &mut expected,
    )
    .map_err(|_| CryptoError::SignatureMismatch)?;
    same(&expected, signature_header)
}

/// The legacy card-callback signature: hex SHA-1 of
/// `timestamp + nonce + verification_token + body`.
pub fn card_signature_v1(
    timestamp: &str,
    nonce: &str,
    verification_token: &str,
    body: &[u8],
) -> String {
    let mut hash = Sha1::new();
    hash.update(timestamp.as_bytes());
    hash.update(nonce.as_bytes());
    hash.update(verification_token.as_bytes());
    hash.update(body);
    hex::encode(hash.finalize())
}

/// Checks a legacy card callback's `X-Lark-Signature`, in constant time.
pub fn verify_card_v1(
    timestamp: &str,
    nonce: &str,
    verification_token: &str,
    body: &[u8],
    signature_header: &str,
) -> Result<(), CryptoError> {
    if signature_header.is_empty() {
        return Err(CryptoError::MissingSignature);
    }
    let expected = card_signature_v1(timestamp, nonce, verification_token, body);
    same(expected.as_bytes(), signature_header)
}

/// Whether a secret-derived string equals what was received, in constant time (the lengths are
/// public: a signature's length is).
pub fn same_secret(expected: &str, received: &str) -> bool {
    same_bytes(expected.as_bytes(), received.as_bytes())
}

fn same_bytes(expected: &[u8], received: &[u8]) -> bool {
    expected.len() == received.len() && bool::from(expected.ct_eq(received))
}

fn same(expected: &[u8], received: &str) -> Result<(), CryptoError> {
    if same_bytes(expected, received.as_bytes()) {
        Ok(())
    } else {
        Err(CryptoError::SignatureMismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_sample_decrypts() {
        assert_eq!(
            decrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=").as_deref(),
            Ok("hello world")
        );
    }

    #[test]
    fn encryption_round_trips_at_every_padding_length() {
        for len in 0..40 {
            let text = "x".repeat(len);
            let sealed = encrypt_with("k", [7; 16], &text);
            assert_eq!(decrypt("k", &sealed).as_deref(), Ok(text.as_str()));
        }
    }

    #[test]
    fn the_documented_signatures_match() {
        let body = br#"{"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="}"#;
        assert_eq!(
            signature("1599360473", "abcdef", "test key", body),
            "99c6af2b7fa90e57a44b5fe1a8062284034fd4d76ccb8562f44e5b678b9ed903"
        );
        assert_eq!(
            card_signature_v1(
                "1599360473",
                "abcdef",
                "my-verification-token",
                br#"{"open_id":"ou_x"}"#
            ),
            "f9bc820e7c87e775c354966257f1aba5aa74c4a7"
        );
    }
}
