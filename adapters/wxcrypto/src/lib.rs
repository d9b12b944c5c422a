//! The callback crypto WeCom (企业微信) and DingTalk (钉钉) share.
//!
//! - Key: `base64(EncodingAESKey + "=")`, 32 bytes; real consoles hand out keys whose last
//!   character has non-zero trailing bits, so those are accepted. The IV is the key's first 16
//!   bytes.
//! - Plaintext block: `random(16) ‖ len(msg) as u32 big-endian ‖ msg ‖ receive_id`, PKCS#7-padded
//!   to **32**-byte blocks (pad 1..=32, not AES's 16), then AES-256-CBC without further padding,
//!   then base64.
//! - `msg_signature`: lower-case hex SHA-1 of the four strings token, timestamp, nonce and
//!   ciphertext, sorted and concatenated.
//!
//! Invariants: a ciphertext is opened only when its signature matches (compared in constant time,
//! as an exact lower-case string), every padding byte checks, the length field fits, and the
//! trailing receive id is exactly the configured one (empty for WeCom's smart robots); anything
//! else is an error that names what failed, never garbage plaintext.

use aes::cipher::{BlockModeDecrypt, BlockModeEncrypt, KeyIvInit, block_padding::NoPadding};
use base64::Engine as _;
use base64::alphabet::STANDARD as ALPHABET;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use sha1::{Digest, Sha1};
use subtle::ConstantTimeEq;

/// The padding block: plaintexts are padded to a multiple of 32 bytes.
const PAD_BLOCK: usize = 32;
/// AES's block size; the ciphertext is whole blocks of it.
const AES_BLOCK: usize = 16;
/// The random prefix's length.
const PREFIX: usize = 16;
/// The length field's size.
const LEN_FIELD: usize = 4;

type Decryptor = cbc::Decryptor<aes::Aes256Dec>;
type Encryptor = cbc::Encryptor<aes::Aes256Enc>;

/// Base64 that accepts non-zero trailing bits, for console-made EncodingAESKeys.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &ALPHABET,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// Why a key was refused or a ciphertext could not be opened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// The EncodingAESKey is not 43 characters of base64 making 32 bytes.
    #[error(
        "the EncodingAESKey must be the 43 characters the admin console shows (it decodes to {0} bytes, not 32)"
    )]
    BadKey(usize),
    /// `msg_signature` does not match.
    #[error("the msg_signature does not match (check the callback's Token)")]
    SignatureMismatch,
    /// The ciphertext is not base64.
    #[error("the encrypted message is not base64")]
    NotBase64,
    /// The ciphertext is not whole AES blocks, or too short for the layout.
    #[error("the encrypted message is {0} bytes: not whole 16-byte blocks of a valid layout")]
    BadLength(usize),
    /// The padding is wrong: another EncodingAESKey, or an altered message.
    #[error("the encrypted message does not decrypt with this EncodingAESKey (bad padding)")]
    BadPadding,
    /// The length field points past the end of the plaintext.
    #[error("the decrypted message's length field ({0}) does not fit")]
    BadMessageLength(usize),
    /// The message is not UTF-8.
    #[error("the decrypted message is not UTF-8")]
    NotUtf8,
    /// The trailing receive id is not the configured one.
    #[error("the message was encrypted for receive id {found:?}, not {expected:?}")]
    ReceiveIdMismatch {
        /// The configured receive id (CorpID, SuiteKey or AppKey; empty for smart robots).
        expected: String,
        /// The one the message carries.
        found: String,
    },
}

/// One app's callback crypto: its Token, its EncodingAESKey and its receive id.
#[derive(Clone)]
pub struct Crypto {
    token: String,
    key: [u8; 32],
    receive_id: String,
}

impl std::fmt::Debug for Crypto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crypto")
            .field("receive_id", &self.receive_id)
            .finish_non_exhaustive()
    }
}

impl Crypto {
    /// The crypto of an app. `receive_id` is the CorpID (WeCom self-built app), the SuiteKey,
    /// AppKey or CorpId (DingTalk), or empty (WeCom smart robot).
    pub fn new(token: &str, encoding_aes_key: &str, receive_id: &str) -> Result<Self, CryptoError> {
        let key = LENIENT
            .decode(format!("{}=", encoding_aes_key.trim()))
            .map_err(|_| CryptoError::BadKey(0))?;
        let key: [u8; 32] = key
            .as_slice()
            .try_into()
            .map_err(|_| CryptoError::BadKey(key.len()))?;
        Ok(Self {
            token: token.to_owned(),
            key,
            receive_id: receive_id.to_owned(),
        })
    }

    /// `msg_signature` of a ciphertext: lower-case hex SHA-1 of token, timestamp, nonce and
    /// `msg_encrypt`, sorted and concatenated.
    pub fn signature(&self, timestamp: &str, nonce: &str, msg_encrypt: &str) -> String {
        let mut parts = [self.token.as_str(), timestamp, nonce, msg_encrypt];
        parts.sort_unstable();
        let mut hash = Sha1::new();
        for part in parts {
            hash.update(part.as_bytes());
        }
        hex::encode(hash.finalize())
    }

    /// Checks the signature, then decrypts: the message, once its padding (1..=32), its length
    /// field and its receive id check.
    pub fn decrypt(
        &self,
        msg_signature: &str,
        timestamp: &str,
        nonce: &str,
        msg_encrypt: &str,
    ) -> Result<String, CryptoError> {
        let expected = self.signature(timestamp, nonce, msg_encrypt);
        if !bool::from(expected.as_bytes().ct_eq(msg_signature.as_bytes())) {
            return Err(CryptoError::SignatureMismatch);
        }
        self.open(msg_encrypt)
    }

    /// Decrypts a ciphertext whose signature was checked.
    fn open(&self, msg_encrypt: &str) -> Result<String, CryptoError> {
        let mut buf = STANDARD
            .decode(msg_encrypt.trim())
            .map_err(|_| CryptoError::NotBase64)?;
        let total = buf.len();
        if total == 0 || total % AES_BLOCK != 0 {
            return Err(CryptoError::BadLength(total));
        }
        let plain = Decryptor::new(&self.key.into(), &self.iv().into())
            .decrypt_padded::<NoPadding>(&mut buf)
            .map_err(|_| CryptoError::BadLength(total))?;
        let body = unpad(plain).ok_or(CryptoError::BadPadding)?;
        let rest = body
            .get(PREFIX..)
            .filter(|rest| rest.len() >= LEN_FIELD)
            .ok_or(CryptoError::BadLength(total))?;
        let (len, rest) = rest.split_at(LEN_FIELD);
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if len > rest.len() {
            return Err(CryptoError::BadMessageLength(len));
        }
        let (msg, receive_id) = rest.split_at(len);
        if receive_id != self.receive_id.as_bytes() {
            return Err(CryptoError::ReceiveIdMismatch {
                expected: self.receive_id.clone(),
                found: String::from_utf8_lossy(receive_id).into_owned(),
            });
        }
        String::from_utf8(msg.to_vec()).map_err(|_| CryptoError::NotUtf8)
    }

    /// Encrypts `plaintext` with the given random prefix: the `msg_encrypt` (`Encrypt`) of a
    /// reply. For tests and stand-ins that must reproduce a ciphertext.
    pub fn encrypt_with(&self, random_prefix: [u8; 16], plaintext: &str) -> String {
        let msg = plaintext.as_bytes();
        let unpadded = PREFIX + LEN_FIELD + msg.len() + self.receive_id.len();
        let pad = PAD_BLOCK - unpadded % PAD_BLOCK;
        let mut buf = Vec::with_capacity(unpadded + pad);
        buf.extend_from_slice(&random_prefix);
        // A message over 4 GiB cannot be sent; its length field saturates and decryption fails.
        buf.extend_from_slice(&u32::try_from(msg.len()).unwrap_or(u32::MAX).to_be_bytes());
        buf.extend_from_slice(msg);
        buf.extend_from_slice(self.receive_id.as_bytes());
        // 1..=32 fits a byte.
        buf.extend(std::iter::repeat_n(pad as u8, pad));
        let len = buf.len();
        // Whole 32-byte blocks, so encrypting without padding cannot fail.
        if Encryptor::new(&self.key.into(), &self.iv().into())
            .encrypt_padded::<NoPadding>(&mut buf, len)
            .is_err()
        {
            return String::new();
        }
        STANDARD.encode(&buf)
    }

    /// Encrypts `plaintext` with a fresh random prefix.
    pub fn encrypt(&self, plaintext: &str) -> String {
        let mut prefix = [0u8; 16];
        if getrandom::fill(&mut prefix).is_err() {
            // No system randomness: the prefix only varies ciphertexts, it keeps nothing secret.
            prefix = nanos_prefix();
        }
        self.encrypt_with(prefix, plaintext)
    }

    /// The IV: the key's first 16 bytes.
    fn iv(&self) -> [u8; 16] {
        let mut iv = [0u8; 16];
        iv.copy_from_slice(&self.key[..16]);
        iv
    }
}

/// A prefix from the clock, when the system has no randomness to give.
fn nanos_prefix() -> [u8; 16] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    nanos.to_le_bytes()
}

/// The plaintext without its 32-byte PKCS#7 padding, when every padding byte checks.
fn unpad(plain: &[u8]) -> Option<&[u8]> {
    let pad = usize::from(*plain.last()?);
    if pad == 0 || pad > PAD_BLOCK || pad > plain.len() {
        return None;
    }
    let (body, tail) = plain.split_at(plain.len() - pad);
    tail.iter().all(|&b| usize::from(b) == pad).then_some(body)
}

/// A file key (an EncodingAESKey, or the `aeskey` a message gives with a file's URL): base64 of
/// 32 bytes, its trailing `=` optional.
fn file_key(key_b64: &str) -> Result<[u8; 32], CryptoError> {
    let key = key_b64.trim().trim_end_matches('=');
    let key = LENIENT
        .decode(format!("{key}="))
        .map_err(|_| CryptoError::BadKey(0))?;
    key.as_slice()
        .try_into()
        .map_err(|_| CryptoError::BadKey(key.len()))
}

/// Decrypts a file a smart-robot message links to: AES-256-CBC under the 32-byte key (the key's
/// first 16 bytes are the IV), PKCS#7 padding to 32-byte blocks.
pub fn decrypt_file(key_b64: &str, data: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let key = file_key(key_b64)?;
    if data.is_empty() || !data.len().is_multiple_of(AES_BLOCK) {
        return Err(CryptoError::BadLength(data.len()));
    }
    let mut iv = [0u8; 16];
    iv.copy_from_slice(&key[..16]);
    let mut buf = data.to_vec();
    let plain = Decryptor::new(&key.into(), &iv.into())
        .decrypt_padded::<NoPadding>(&mut buf)
        .map_err(|_| CryptoError::BadLength(data.len()))?;
    unpad(plain)
        .map(<[u8]>::to_vec)
        .ok_or(CryptoError::BadPadding)
}

/// Encrypts a file as WeCom does for [`decrypt_file`]: for tests and stand-ins.
pub fn encrypt_file(key_b64: &str, plain: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let key = file_key(key_b64)?;
    let mut iv = [0u8; 16];
    iv.copy_from_slice(&key[..16]);
    let pad = PAD_BLOCK - plain.len() % PAD_BLOCK;
    let mut buf = plain.to_vec();
    // 1..=32 fits a byte.
    buf.extend(std::iter::repeat_n(pad as u8, pad));
    let len = buf.len();
    Encryptor::new(&key.into(), &iv.into())
        .encrypt_padded::<NoPadding>(&mut buf, len)
        .map_err(|_| CryptoError::BadLength(len))?;
    Ok(buf)
}
