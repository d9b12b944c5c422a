//! The vault's error type. No variant ever carries a secret, a key or a plaintext fragment.

use std::path::PathBuf;

/// What can go wrong sealing, opening or loading keys.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The row names a master key the provider does not hold.
    #[error("master key {key_id} is not available; configure it as the current or a previous key")]
    UnknownKey {
        /// The key id stored with the row.
        key_id: String,
    },
    /// Authentication failed: the row was changed, copied from another tenant, owner or name,
    /// or wrapped by a different key with the same id.
    #[error(
        "the secret {what} does not decrypt: it was altered, or moved from where it was stored"
    )]
    Decrypt {
        /// Which layer failed: "data key" or "value".
        what: &'static str,
    },
    /// The platform's random number generator failed.
    #[error("no randomness available: {0}")]
    Random(String),
    /// A key file cannot be used.
    #[error("master key file {}: {reason}", path.display())]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// A key given as text (e.g. an environment variable) is not 32 bytes of base64.
    #[error("master key from {source_name}: {reason}")]
    KeyFormat {
        /// Where the key came from, e.g. `WORKMATE_VAULT_KEY`.
        source_name: String,
        /// What is wrong with it (never its value).
        reason: String,
    },
    /// A secret name does not have the accepted shape.
    #[error("invalid secret name {name:?}: {reason}")]
    InvalidName {
        /// The name as given (names are not secret).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A stored row does not have the shape this crate writes.
    #[error("malformed sealed secret: {0}")]
    Malformed(&'static str),
}

/// The vault's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
