//! Sealing and opening one secret: envelope encryption bound to where the secret belongs.
//!
//! Invariants: every seal uses a fresh data key and a fresh nonce; the associated data of both
//! layers encodes the tenant, the owner (or its absence) and the name unambiguously (length
//! prefixes), so no two different places share it; opening checks both layers, so a changed
//! ciphertext, nonce, wrapped key, key id or place is refused.

use std::fmt;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use secrecy::{ExposeSecret, SecretString};
use zeroize::Zeroizing;

use crate::key::{DataKey, random};
use crate::provider::{KeyProvider, NONCE_LEN, WrappedKey};
use crate::{Error, Result, SecretName};

/// Where a secret belongs: the associated data of its encryption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecretRef<'a> {
    /// The tenant.
    pub tenant: &'a str,
    /// The user it belongs to; `None` for a tenant-wide secret.
    pub owner: Option<&'a str>,
    /// Its name.
    pub name: &'a SecretName,
}

impl SecretRef<'_> {
    /// The associated data of one layer (`data` or `wrap`).
    fn aad(&self, layer: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.tenant.len() + self.name.as_str().len());
        out.extend_from_slice(b"workmate-vault v1\0");
        push(&mut out, layer.as_bytes());
        push(&mut out, self.tenant.as_bytes());
        match self.owner {
            None => out.push(0),
            Some(owner) => {
                out.push(1);
                push(&mut out, owner.as_bytes());
            }
        }
        push(&mut out, self.name.as_str().as_bytes());
        out
    }
}

/// Appends `bytes` with a length prefix.
fn push(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A sealed secret as stored: nothing in it is secret without the master key.
#[derive(Clone, PartialEq, Eq)]
pub struct Sealed {
    /// The id of the master key that wrapped the data key.
    pub key_id: String,
    /// The wrapped data key (the provider's bytes).
    pub wrapped_key: Vec<u8>,
    /// The nonce of the secret's own encryption.
    pub nonce: Vec<u8>,
    /// The secret, encrypted with the data key, and its tag.
    pub ciphertext: Vec<u8>,
}

impl fmt::Debug for Sealed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealed")
            .field("key_id", &self.key_id)
            .field("wrapped_key_len", &self.wrapped_key.len())
            .field("ciphertext_len", &self.ciphertext.len())
            .finish_non_exhaustive()
    }
}

fn data_cipher(key: &DataKey) -> Result<Aes256Gcm> {
    Aes256Gcm::new_from_slice(key.expose()).map_err(|_| Error::Malformed("data key length"))
}

/// Encrypts `secret` for `place` under a fresh data key wrapped by `keys`' current master key.
pub fn seal(
    keys: &dyn KeyProvider,
    place: &SecretRef<'_>,
    secret: &SecretString,
) -> Result<Sealed> {
    let data_key = DataKey::generate()?;
    let mut nonce = [0u8; NONCE_LEN];
    random(&mut nonce)?;
    let ciphertext = data_cipher(&data_key)?
        .encrypt(
            &Nonce::from(nonce),
            Payload {
                msg: secret.expose_secret().as_bytes(),
                aad: &place.aad("data"),
            },
        )
        .map_err(|_| Error::Malformed("secret could not be encrypted"))?;
    let wrapped = keys.wrap(&data_key, &place.aad("wrap"))?;
    Ok(Sealed {
        key_id: wrapped.key_id,
        wrapped_key: wrapped.bytes,
        nonce: nonce.to_vec(),
        ciphertext,
    })
}

/// Decrypts a secret sealed for `place`.
pub fn open(
    keys: &dyn KeyProvider,
    place: &SecretRef<'_>,
    sealed: &Sealed,
) -> Result<SecretString> {
    let data_key = unwrap(keys, place, sealed)?;
    let nonce: [u8; NONCE_LEN] = sealed
        .nonce
        .as_slice()
        .try_into()
        .map_err(|_| Error::Malformed("nonce length"))?;
    let plain = Zeroizing::new(
        data_cipher(&data_key)?
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: &sealed.ciphertext,
                    aad: &place.aad("data"),
                },
            )
            .map_err(|_| Error::Decrypt { what: "value" })?,
    );
    let text = std::str::from_utf8(&plain).map_err(|_| Error::Malformed("secret is not UTF-8"))?;
    Ok(SecretString::from(text))
}

/// Re-wraps the data key of a sealed secret with `keys`' current master key. `None` when it is
/// already wrapped by that key (nothing to do). The ciphertext and nonce are kept as they are.
pub fn rewrap(
    keys: &dyn KeyProvider,
    place: &SecretRef<'_>,
    sealed: &Sealed,
) -> Result<Option<Sealed>> {
    if sealed.key_id == keys.key_id() {
        return Ok(None);
    }
    let data_key = unwrap(keys, place, sealed)?;
    let wrapped = keys.wrap(&data_key, &place.aad("wrap"))?;
    Ok(Some(Sealed {
        key_id: wrapped.key_id,
        wrapped_key: wrapped.bytes,
        ..sealed.clone()
    }))
}

fn unwrap(keys: &dyn KeyProvider, place: &SecretRef<'_>, sealed: &Sealed) -> Result<DataKey> {
    let wrapped = WrappedKey {
        key_id: sealed.key_id.clone(),
        bytes: sealed.wrapped_key.clone(),
    };
    keys.unwrap(&wrapped, &place.aad("wrap"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn associated_data_tells_places_apart() {
        let (ab, a) = (
            SecretName::parse("b").unwrap(),
            SecretName::parse("a").unwrap(),
        );
        let places = [
            SecretRef {
                tenant: "t",
                owner: None,
                name: &a,
            },
            SecretRef {
                tenant: "t",
                owner: Some(""),
                name: &a,
            },
            SecretRef {
                tenant: "t",
                owner: Some("u"),
                name: &a,
            },
            SecretRef {
                tenant: "tu",
                owner: None,
                name: &a,
            },
            SecretRef {
                tenant: "t",
                owner: None,
                name: &ab,
            },
        ];
        for (i, x) in places.iter().enumerate() {
            for y in &places[i + 1..] {
                assert_ne!(x.aad("data"), y.aad("data"), "{x:?} vs {y:?}");
            }
            assert_ne!(x.aad("data"), x.aad("wrap"));
        }
    }
}
