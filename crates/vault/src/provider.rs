//! Who holds the master key: the [`KeyProvider`] trait and the local [`Keyring`].
//!
//! Invariant: a provider wraps only with its *current* key and unwraps with whichever key the
//! row names, if it holds it; a key it does not hold is an [`Error::UnknownKey`], never a guess.
//! A remote key service (a cloud KMS, HashiCorp Vault's transit engine) fits the same shape: its
//! `wrap`/`unwrap` are its encrypt/decrypt calls, with the associated data as the encryption
//! context.

use std::fmt;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use zeroize::Zeroizing;

use crate::key::{DataKey, KEY_LEN, MasterKey, random};
use crate::{Error, Result};

/// The length of an AES-GCM nonce.
pub(crate) const NONCE_LEN: usize = 12;

/// A data key as wrapped by a master key, and that key's id.
#[derive(Clone, PartialEq, Eq)]
pub struct WrappedKey {
    /// The id of the master key that wrapped it.
    pub key_id: String,
    /// The provider's opaque bytes (for the [`Keyring`]: nonce, then ciphertext and tag).
    pub bytes: Vec<u8>,
}

impl fmt::Debug for WrappedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrappedKey")
            .field("key_id", &self.key_id)
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// Holds master keys and wraps data keys with them.
pub trait KeyProvider: Send + Sync + fmt::Debug {
    /// The id of the master key new data keys are wrapped with.
    fn key_id(&self) -> &str;

    /// Wraps `data_key` with the current master key, authenticating `aad`.
    fn wrap(&self, data_key: &DataKey, aad: &[u8]) -> Result<WrappedKey>;

    /// Unwraps a data key wrapped by the master key `wrapped.key_id`, checking `aad`.
    fn unwrap(&self, wrapped: &WrappedKey, aad: &[u8]) -> Result<DataKey>;

    /// Whether this provider can unwrap data keys wrapped by `key_id`.
    fn has_key(&self, key_id: &str) -> bool;
}

/// Local master keys: the current one (from a key file or an environment variable) and the
/// previous ones still needed to read rows not yet rotated.
#[derive(Debug)]
pub struct Keyring {
    current: MasterKey,
    previous: Vec<MasterKey>,
}

impl Keyring {
    /// A keyring wrapping with `current`, and also unwrapping with `previous`. A previous key
    /// equal to the current one, or listed twice, is kept once.
    pub fn new(current: MasterKey, previous: Vec<MasterKey>) -> Self {
        let mut kept: Vec<MasterKey> = Vec::with_capacity(previous.len());
        for key in previous {
            if key.id() != current.id() && kept.iter().all(|k| k.id() != key.id()) {
                kept.push(key);
            }
        }
        Self {
            current,
            previous: kept,
        }
    }

    /// The current key, then the previous ones.
    pub fn keys(&self) -> impl Iterator<Item = &MasterKey> {
        std::iter::once(&self.current).chain(&self.previous)
    }

    fn find(&self, key_id: &str) -> Option<&MasterKey> {
        self.keys().find(|k| k.id() == key_id)
    }
}

fn cipher(key: &MasterKey) -> Result<Aes256Gcm> {
    // Only fails for a key of the wrong length, which `MasterKey` cannot hold.
    Aes256Gcm::new_from_slice(key.bytes()).map_err(|_| Error::Malformed("master key length"))
}

impl KeyProvider for Keyring {
    fn key_id(&self) -> &str {
        self.current.id()
    }

    fn wrap(&self, data_key: &DataKey, aad: &[u8]) -> Result<WrappedKey> {
        let mut nonce = [0u8; NONCE_LEN];
        random(&mut nonce)?;
        let sealed = cipher(&self.current)?
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: data_key.expose(),
                    aad,
                },
            )
            .map_err(|_| Error::Malformed("data key could not be wrapped"))?;
        let mut bytes = Vec::with_capacity(NONCE_LEN + sealed.len());
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&sealed);
        Ok(WrappedKey {
            key_id: self.current.id().to_owned(),
            bytes,
        })
    }

    fn unwrap(&self, wrapped: &WrappedKey, aad: &[u8]) -> Result<DataKey> {
        let key = self
            .find(&wrapped.key_id)
            .ok_or_else(|| Error::UnknownKey {
                key_id: wrapped.key_id.clone(),
            })?;
        let (nonce, sealed) = wrapped
            .bytes
            .split_at_checked(NONCE_LEN)
            .ok_or(Error::Malformed("wrapped key too short"))?;
        let nonce: [u8; NONCE_LEN] = nonce
            .try_into()
            .map_err(|_| Error::Malformed("wrapped key nonce"))?;
        let plain = Zeroizing::new(
            cipher(key)?
                .decrypt(&Nonce::from(nonce), Payload { msg: sealed, aad })
                .map_err(|_| Error::Decrypt { what: "data key" })?,
        );
        let bytes: [u8; KEY_LEN] = plain
            .as_slice()
            .try_into()
            .map_err(|_| Error::Malformed("unwrapped data key length"))?;
        Ok(DataKey::from_bytes(Zeroizing::new(bytes)))
    }

    fn has_key(&self, key_id: &str) -> bool {
        self.find(key_id).is_some()
    }
}
