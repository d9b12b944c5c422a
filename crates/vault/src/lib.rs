//! workmate's credential vault: the cryptography, with no storage attached.
//!
//! Every secret is sealed with envelope encryption:
//! - a fresh random AES-256-GCM *data key* encrypts the one secret (random 96-bit nonce);
//! - the data key is *wrapped* (encrypted) by a master key held by a [`KeyProvider`], which
//!   names the master key by a key id stored beside the row;
//! - both encryptions authenticate the same associated data, which binds the tenant, the owner
//!   and the secret's name ([`SecretRef`]), so a row copied to another tenant, owner or name does
//!   not open.
//!
//! Invariants: plaintext only ever exists as a [`secrecy::SecretString`] (or zeroized buffers on
//! the way to and from one); no `Debug`, `Display` or error of this crate contains a secret or
//! key bytes; a secret opens only with the master key it was wrapped with and only under the
//! tenant, owner and name it was sealed for.
//!
//! Rotating the master key re-wraps data keys only ([`rewrap`]): the secret's ciphertext and
//! nonce do not change, and no plaintext secret is produced on the way.

mod envelope;
mod error;
mod key;
mod name;
mod provider;

pub use envelope::{Sealed, SecretRef, open, rewrap, seal};
pub use error::{Error, Result};
pub use key::{DataKey, KEY_LEN, MasterKey};
pub use name::{MAX_NAME_LEN, SecretName};
pub use provider::{KeyProvider, Keyring, WrappedKey};
pub use secrecy::{ExposeSecret, SecretString};
