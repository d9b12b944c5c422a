//! Key material: master keys (from a file or from text such as an environment variable) and the
//! per-secret data keys.
//!
//! Invariants: key bytes live in zeroizing buffers and are wiped when dropped; `Debug` shows a
//! key's id and where it came from, never its bytes; a key file that the group or others may
//! read or write is refused, not used.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::{Error, Result};

/// The length of every key, master or data: AES-256.
pub const KEY_LEN: usize = 32;

/// Domain separation for key ids, so the id is not a hash that means anything elsewhere.
const KEY_ID_CONTEXT: &[u8] = b"workmate-vault master key id v1\0";

/// Fills `buf` from the operating system's random number generator.
pub(crate) fn random(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::Random(e.to_string()))
}

/// A master key: 32 secret bytes and the id rows name it by.
///
/// The id is derived from the key (`k1-` and 16 hex digits of a domain-separated SHA-256), so
/// the same key has the same id whether it is read from a file or from the environment, and two
/// different keys practically never share one.
pub struct MasterKey {
    id: String,
    bytes: Zeroizing<[u8; KEY_LEN]>,
    source: String,
}

impl MasterKey {
    /// A key from its bytes; `source` says where it came from, for messages.
    pub fn from_bytes(bytes: [u8; KEY_LEN], source: impl Into<String>) -> Self {
        let bytes = Zeroizing::new(bytes);
        let mut hasher = Sha256::new();
        hasher.update(KEY_ID_CONTEXT);
        hasher.update(bytes.as_slice());
        let digest = hasher.finalize();
        let id = format!("k1-{}", hex::encode(&digest[..8]));
        Self {
            id,
            bytes,
            source: source.into(),
        }
    }

    /// A fresh random key (for tests and for generating a key file).
    pub fn generate(source: impl Into<String>) -> Result<Self> {
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        random(bytes.as_mut_slice())?;
        Ok(Self::from_bytes(*bytes, source))
    }

    /// A key written as base64 of 32 bytes (surrounding whitespace ignored), e.g. the value of
    /// `WORKMATE_VAULT_KEY`; `source` names where it came from.
    pub fn from_base64(text: &SecretString, source: impl Into<String>) -> Result<Self> {
        let source = source.into();
        let bad = |reason: &str| Error::KeyFormat {
            source_name: source.clone(),
            reason: reason.to_owned(),
        };
        let decoded = Zeroizing::new(
            STANDARD
                .decode(text.expose_secret().trim())
                .map_err(|_| bad("not base64; write 32 random bytes as base64"))?,
        );
        let bytes: [u8; KEY_LEN] = decoded
            .as_slice()
            .try_into()
            .map_err(|_| bad("not 32 bytes once decoded; write 32 random bytes as base64"))?;
        Ok(Self::from_bytes(bytes, source))
    }

    /// Reads a key file: base64 of 32 random bytes. Refuses a file the group or others may read
    /// or write (it must be mode 600 or 400, like the admin token file).
    pub fn read_file(path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::KeyFile {
            path: path.to_owned(),
            reason,
        };
        check_owner_only(path).map_err(&bad)?;
        let text = Zeroizing::new(
            std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?,
        );
        let secret = SecretString::from(text.as_str());
        Self::from_base64(&secret, format!("file {}", path.display())).map_err(|e| match e {
            Error::KeyFormat { reason, .. } => bad(reason),
            other => other,
        })
    }

    /// Writes this key to a new file, owner-only (mode 600); refuses to overwrite a file.
    pub fn write_new_file(&self, path: &Path) -> Result<()> {
        use std::io::Write as _;
        let bad = |reason: String| Error::KeyFile {
            path: path.to_owned(),
            reason,
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options
            .open(path)
            .map_err(|e| bad(format!("cannot create it: {e}")))?;
        let text = Zeroizing::new(format!("{}\n", STANDARD.encode(self.bytes.as_slice())));
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| bad(format!("cannot write it: {e}")))
    }

    /// The id rows wrapped by this key are stored with.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where the key came from (`file …`, `WORKMATE_VAULT_KEY`, …).
    pub fn source(&self) -> &str {
        &self.source
    }

    pub(crate) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.bytes
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MasterKey")
            .field("id", &self.id)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// The owner-only check; the reason says how to fix the file.
#[cfg(unix)]
fn check_owner_only(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "its mode is {mode:o}, so others than its owner may read or change it; \
             run `chmod 600` on it"
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner_only(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// One secret's own AES-256 key, wiped when dropped.
pub struct DataKey(Zeroizing<[u8; KEY_LEN]>);

impl DataKey {
    /// A fresh random data key.
    pub fn generate() -> Result<Self> {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        random(key.as_mut_slice())?;
        Ok(Self(key))
    }

    /// A data key from bytes, e.g. as a remote key service returns it after unwrapping.
    pub fn from_bytes(bytes: Zeroizing<[u8; KEY_LEN]>) -> Self {
        Self(bytes)
    }

    /// The key bytes, for a [`crate::KeyProvider`] to wrap.
    pub fn expose(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DataKey(***)")
    }
}
