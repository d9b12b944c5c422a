//! Secrets the configuration names in the credential vault: a platform or single-sign-on secret
//! written as `vault:<name>` is read, at start, from the vault's tenant-wide secret `<name>` of
//! the `default` tenant (stored with `workmate vault put <name>`).
//!
//! Invariants: a reference that cannot be resolved (no master key, no such secret, a secret that
//! does not open) stops the start with a message naming the setting and how to fix it, never with
//! a half-configured platform; resolved values stay [`SecretString`]s and are never logged; the
//! encoding AES keys of WeCom and DingTalk are checked for length when the configuration loads,
//! so they are written in the configuration (or its environment), not referenced.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use tracing::info;
use workmate_protocol::TenantId;
use workmate_store::{Store, Vault};

use crate::config::{Config, VAULT_KEY_ENV};
use crate::error::StartupError;
use crate::http::api::auth::DEFAULT_TENANT;

/// The prefix of a secret the vault holds.
pub(crate) const VAULT_PREFIX: &str = "vault:";

/// `config` with every `vault:` secret replaced by its value from the vault.
pub(crate) async fn resolve(config: &Config, store: &Store) -> Result<Config, StartupError> {
    let mut resolved = config.clone();
    let mut wanted: Vec<(&'static str, &mut SecretString)> = Vec::new();
    let p = &mut resolved.platforms;
    if let Some(slack) = p.slack.as_mut() {
        wanted.push(("platforms.slack.bot_token", &mut slack.bot_token));
        if let Some(s) = slack.signing_secret.as_mut() {
            wanted.push(("platforms.slack.signing_secret", s));
        }
        if let Some(s) = slack.app_token.as_mut() {
            wanted.push(("platforms.slack.app_token", s));
        }
    }
    if let Some(feishu) = p.feishu.as_mut() {
        wanted.push(("platforms.feishu.app_secret", &mut feishu.app_secret));
        if let Some(s) = feishu.encrypt_key.as_mut() {
            wanted.push(("platforms.feishu.encrypt_key", s));
        }
        if let Some(s) = feishu.verification_token.as_mut() {
            wanted.push(("platforms.feishu.verification_token", s));
        }
    }
    if let Some(wecom) = p.wecom.as_mut() {
        if let Some(s) = wecom.secret.as_mut() {
            wanted.push(("platforms.wecom.secret", s));
        }
        if let Some(s) = wecom.token.as_mut() {
            wanted.push(("platforms.wecom.token", s));
        }
    }
    if let Some(dingtalk) = p.dingtalk.as_mut() {
        wanted.push((
            "platforms.dingtalk.client_secret",
            &mut dingtalk.client_secret,
        ));
        if let Some(s) = dingtalk.token.as_mut() {
            wanted.push(("platforms.dingtalk.token", s));
        }
    }
    if let Some(oidc) = resolved.auth.oidc.as_mut() {
        wanted.push(("auth.oidc.client_secret", &mut oidc.client_secret));
    }
    wanted.retain(|(_, secret)| secret.expose_secret().starts_with(VAULT_PREFIX));
    if wanted.is_empty() {
        return Ok(resolved);
    }
    let keys = match config.vault.keyring() {
        Ok(Some(ring)) => ring,
        Ok(None) => {
            return Err(StartupError::VaultKeys(format!(
                "{} names a vault secret, but no master key is configured; set [vault] key_file \
                 or {VAULT_KEY_ENV}",
                wanted[0].0
            )));
        }
        Err(e) => return Err(StartupError::VaultKeys(e.to_string())),
    };
    let vault = Vault::new(store.clone(), Arc::new(keys));
    let tenant = TenantId::from(DEFAULT_TENANT);
    for (setting, secret) in wanted {
        let name = secret
            .expose_secret()
            .trim_start_matches(VAULT_PREFIX)
            .trim()
            .to_owned();
        let value = vault
            .get(&tenant, None, &name)
            .await
            .map_err(|e| StartupError::VaultKeys(format!("{setting} = \"vault:{name}\": {e}")))?
            .ok_or_else(|| {
                StartupError::VaultKeys(format!(
                    "{setting} = \"vault:{name}\", but the vault holds no secret {name}; store it \
                     with `workmate vault put {name}` (the value on standard input)"
                ))
            })?;
        *secret = SecretString::from(value.expose_secret().trim().to_owned());
        info!(setting, name = %name, "Secret read from the vault.");
    }
    Ok(resolved)
}
