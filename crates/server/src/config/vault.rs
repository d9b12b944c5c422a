//! Validating `[vault]`: where the credential vault's master keys come from.
//!
//! Invariants: there is at most one current master key, from `[vault] key_file` or from the
//! environment variable `WORKMATE_VAULT_KEY`, never both; previous keys (still needed to read
//! rows not yet rotated) come from `previous_key_files` and `WORKMATE_VAULT_PREVIOUS_KEYS`, and
//! only with a current key; a key given in the environment is checked here (32 bytes of base64)
//! and only ever held as a `SecretString`. Key files are read when the vault is opened, not here.

use std::path::PathBuf;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use workmate_vault::{Keyring, MasterKey};

use super::ConfigError;

/// The environment variable holding the current master key itself (base64 of 32 bytes).
pub const VAULT_KEY_ENV: &str = "WORKMATE_VAULT_KEY";
/// The environment variable holding previous master keys, comma-separated.
pub const VAULT_PREVIOUS_KEYS_ENV: &str = "WORKMATE_VAULT_PREVIOUS_KEYS";

/// `[vault]`, as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVault {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) previous_key_files: Option<Vec<String>>,
}

/// `[vault]` and the vault's environment variables.
#[derive(Clone, Debug, Default)]
pub struct VaultSettings {
    /// `key_file`: the current master key's file (base64 of 32 random bytes, mode 600).
    pub key_file: Option<PathBuf>,
    /// `previous_key_files`: older master keys' files, for rows not yet rotated.
    pub previous_key_files: Vec<PathBuf>,
    /// `WORKMATE_VAULT_KEY`: the current master key itself, when not in a file.
    pub key_env: Option<SecretString>,
    /// `WORKMATE_VAULT_PREVIOUS_KEYS`: older master keys, comma-separated.
    pub previous_keys_env: Vec<SecretString>,
}

impl VaultSettings {
    /// Whether a current master key is configured.
    pub fn configured(&self) -> bool {
        self.key_file.is_some() || self.key_env.is_some()
    }

    /// Where the current master key comes from (its file, or the environment variable), for an
    /// operator to find it again; `None` when none is configured. Never the key itself.
    pub fn key_source(&self) -> Option<String> {
        match (&self.key_file, &self.key_env) {
            (Some(path), _) => Some(format!("[vault] key_file {}", path.display())),
            (None, Some(_)) => Some(VAULT_KEY_ENV.to_owned()),
            (None, None) => None,
        }
    }

    /// The configured keys (reading the key files), or `None` when no key is configured.
    pub fn keyring(&self) -> Result<Option<Keyring>, workmate_vault::Error> {
        let current = match (&self.key_file, &self.key_env) {
            (Some(path), _) => MasterKey::read_file(path)?,
            (None, Some(text)) => MasterKey::from_base64(text, VAULT_KEY_ENV)?,
            (None, None) => return Ok(None),
        };
        let mut previous = Vec::new();
        for path in &self.previous_key_files {
            previous.push(MasterKey::read_file(path)?);
        }
        for (i, text) in self.previous_keys_env.iter().enumerate() {
            let source = format!("{VAULT_PREVIOUS_KEYS_ENV} (entry {})", i + 1);
            previous.push(MasterKey::from_base64(text, source)?);
        }
        Ok(Some(Keyring::new(current, previous)))
    }
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_vault(
    raw: &RawVault,
    env: &[(String, String)],
    invalid: Invalid<'_>,
) -> Result<VaultSettings, ConfigError> {
    let variable = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.trim().is_empty())
    };
    let key_file = match raw.key_file.as_deref() {
        Some(path) if path.trim().is_empty() => {
            return Err(invalid("vault", "key_file", "the path is empty".into()));
        }
        path => path.map(PathBuf::from),
    };
    let previous_key_files: Vec<PathBuf> = raw
        .previous_key_files
        .iter()
        .flatten()
        .map(|p| {
            if p.trim().is_empty() {
                Err(invalid(
                    "vault",
                    "previous_key_files",
                    "a path is empty".into(),
                ))
            } else {
                Ok(PathBuf::from(p))
            }
        })
        .collect::<Result<_, _>>()?;
    let check = |text: &str, source: String| -> Result<SecretString, ConfigError> {
        let secret = SecretString::from(text.trim());
        MasterKey::from_base64(&secret, source)
            .map_err(|e| invalid("vault", "key_file", e.to_string()))?;
        Ok(secret)
    };
    let key_env = variable(VAULT_KEY_ENV)
        .map(|v| check(v, VAULT_KEY_ENV.to_owned()))
        .transpose()?;
    let previous_keys_env = variable(VAULT_PREVIOUS_KEYS_ENV)
        .map(|list| {
            list.split(',')
                .filter(|v| !v.trim().is_empty())
                .enumerate()
                .map(|(i, v)| check(v, format!("{VAULT_PREVIOUS_KEYS_ENV} (entry {})", i + 1)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    if key_file.is_some() && key_env.is_some() {
        return Err(invalid(
            "vault",
            "key_file",
            format!(
                "both key_file and {VAULT_KEY_ENV} name a current master key; keep one, and list \
                 the other under previous_key_files or {VAULT_PREVIOUS_KEYS_ENV} if rows still \
                 use it"
            ),
        ));
    }
    if key_file.is_none()
        && key_env.is_none()
        && (!previous_key_files.is_empty() || !previous_keys_env.is_empty())
    {
        return Err(invalid(
            "vault",
            "previous_key_files",
            format!("previous keys are set but no current one; set key_file or {VAULT_KEY_ENV}"),
        ));
    }
    Ok(VaultSettings {
        key_file,
        previous_key_files,
        key_env,
        previous_keys_env,
    })
}

/// `[vault]` as configured (paths only; keys from the environment are never written out).
pub(crate) fn render_vault(settings: &VaultSettings) -> RawVault {
    let path = |p: &PathBuf| p.display().to_string();
    RawVault {
        key_file: settings.key_file.as_ref().map(path),
        previous_key_files: (!settings.previous_key_files.is_empty())
            .then(|| settings.previous_key_files.iter().map(path).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    fn check(raw: &RawVault, env: &[(&str, &str)]) -> Result<VaultSettings, ConfigError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let invalid = |section, key, problem| ConfigError::Invalid {
            section,
            key,
            origin: super::super::Source::Default,
            problem,
            how: String::new(),
        };
        validate_vault(raw, &env, &invalid)
    }

    #[test]
    fn one_current_key_from_a_file_or_the_environment() {
        let none = check(&RawVault::default(), &[]).unwrap();
        assert!(!none.configured());
        assert!(none.keyring().unwrap().is_none());

        let from_env = check(&RawVault::default(), &[(VAULT_KEY_ENV, KEY)]).unwrap();
        assert!(from_env.configured());
        assert!(from_env.keyring().unwrap().is_some());
        assert!(!format!("{from_env:?}").contains(KEY));

        let file = RawVault {
            key_file: Some("/etc/workmate/vault.key".into()),
            previous_key_files: Some(vec!["/etc/workmate/old.key".into()]),
        };
        let from_file = check(&file, &[]).unwrap();
        assert_eq!(from_file.previous_key_files.len(), 1);

        let both = check(&file, &[(VAULT_KEY_ENV, KEY)]).unwrap_err();
        assert!(
            both.to_string()
                .contains("both key_file and WORKMATE_VAULT_KEY"),
            "{both}"
        );
        let orphan = RawVault {
            key_file: None,
            previous_key_files: Some(vec!["/old.key".into()]),
        };
        assert!(check(&orphan, &[]).is_err());
    }

    #[test]
    fn a_malformed_key_in_the_environment_is_refused_without_echoing_it() {
        let err = check(&RawVault::default(), &[(VAULT_KEY_ENV, "c2hvcnQ=")]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(VAULT_KEY_ENV) && !text.contains("c2hvcnQ="),
            "{text}"
        );
        let err = check(
            &RawVault::default(),
            &[
                (VAULT_KEY_ENV, KEY),
                (VAULT_PREVIOUS_KEYS_ENV, &format!("{KEY},nope")),
            ],
        )
        .unwrap_err();
        assert!(err.to_string().contains("entry 2"), "{err}");
        let ok = check(
            &RawVault::default(),
            &[
                (VAULT_KEY_ENV, KEY),
                (VAULT_PREVIOUS_KEYS_ENV, &format!("{KEY}, {KEY}")),
            ],
        )
        .unwrap();
        assert_eq!(ok.previous_keys_env.len(), 2);
    }
}
