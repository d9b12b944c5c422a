//! Secrets the configuration names in the credential vault: a platform, model provider,
//! single-sign-on or connector OAuth client secret written as `vault:<name>` is read, at start, from the vault's
//! tenant-wide secret `<name>` of the `default` tenant (stored with `workmate vault put <name>`).
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

/// Whether any secret of `config` names the vault.
pub(crate) fn any(config: &Config) -> bool {
    let mut copy = config.clone();
    !references(&mut copy).is_empty()
}

/// `config` with every `vault:` secret replaced by its value from the vault, opening the
/// configured database only when there is one (for commands that have no store open).
pub(crate) async fn resolve_opening(config: &Config) -> Result<Config, StartupError> {
    if !any(config) {
        return Ok(config.clone());
    }
    crate::data_dir::prepare(&config.server.data_dir)?;
    let store = crate::database::open(config).await?;
    crate::database::migrate(&store, config).await?;
    let resolved = resolve(config, &store).await;
    store.close().await;
    resolved
}

/// `config` with every `vault:` secret replaced by its value from the vault.
pub(crate) async fn resolve(config: &Config, store: &Store) -> Result<Config, StartupError> {
    let mut resolved = config.clone();
    let wanted = references(&mut resolved);
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
        info!(setting = %setting, name = %name, "Secret read from the vault.");
    }
    Ok(resolved)
}

/// The secrets of `config` that name the vault, with their settings' names.
fn references(config: &mut Config) -> Vec<(String, &mut SecretString)> {
    let mut wanted: Vec<(String, &mut SecretString)> = Vec::new();
    for gateway in &mut config.providers.gateways {
        if let Some(key) = gateway.api_key.as_mut() {
            wanted.push((format!("providers.{}.api_key", gateway.name), key));
        }
    }
    let p = &mut config.platforms;
    if let Some(slack) = p.slack.as_mut() {
        wanted.push(("platforms.slack.bot_token".into(), &mut slack.bot_token));
        if let Some(s) = slack.signing_secret.as_mut() {
            wanted.push(("platforms.slack.signing_secret".into(), s));
        }
        if let Some(s) = slack.app_token.as_mut() {
            wanted.push(("platforms.slack.app_token".into(), s));
        }
    }
    if let Some(feishu) = p.feishu.as_mut() {
        wanted.push(("platforms.feishu.app_secret".into(), &mut feishu.app_secret));
        if let Some(s) = feishu.encrypt_key.as_mut() {
            wanted.push(("platforms.feishu.encrypt_key".into(), s));
        }
        if let Some(s) = feishu.verification_token.as_mut() {
            wanted.push(("platforms.feishu.verification_token".into(), s));
        }
    }
    if let Some(wecom) = p.wecom.as_mut() {
        if let Some(s) = wecom.secret.as_mut() {
            wanted.push(("platforms.wecom.secret".into(), s));
        }
        if let Some(s) = wecom.token.as_mut() {
            wanted.push(("platforms.wecom.token".into(), s));
        }
    }
    if let Some(dingtalk) = p.dingtalk.as_mut() {
        wanted.push((
            "platforms.dingtalk.client_secret".into(),
            &mut dingtalk.client_secret,
        ));
        if let Some(s) = dingtalk.token.as_mut() {
            wanted.push(("platforms.dingtalk.token".into(), s));
        }
    }
    if let Some(oidc) = config.auth.oidc.as_mut() {
        wanted.push(("auth.oidc.client_secret".into(), &mut oidc.client_secret));
    }
    for client in &mut config.connectors.oauth {
        wanted.push((
            format!("connectors.oauth.{}.client_secret", client.connector),
            &mut client.client_secret,
        ));
    }
    wanted.retain(|(_, secret)| secret.expose_secret().starts_with(VAULT_PREFIX));
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigSources;

    #[test]
    fn every_kind_of_secret_may_name_the_vault_and_plain_ones_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("workmate.toml"),
            "[providers.gateway]\nkind = \"openai\"\nbase_url = \"https://llm.example.com/v1\"\n\
             api_key = \"vault:provider/gateway/api_key\"\n\n\
             [platforms.slack]\nsigning_secret = \"plain-signing-secret\"\n\
             bot_token = \"vault:platform/slack/bot_token\"\n\n\
             [connectors.oauth.gmail]\nclient_id = \"cid\"\n\
             client_secret = \"vault:connectors/gmail/client_secret\"\n",
        )
        .unwrap();
        let config = Config::load(&ConfigSources {
            working_dir: dir.path().to_owned(),
            ..ConfigSources::default()
        })
        .unwrap();
        let mut copy = config.clone();
        let named: Vec<String> = references(&mut copy).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            named,
            [
                "providers.gateway.api_key",
                "platforms.slack.bot_token",
                "connectors.oauth.gmail.client_secret"
            ]
        );
        assert!(any(&config));
    }
}
