//! `[platforms.feishu]`: the Feishu / Lark app workmate answers as, as written ([`RawFeishu`])
//! and validated ([`FeishuConfig`]).
//!
//! Invariant: a [`FeishuConfig`] has the app's credentials (`app_id`, `app_secret`), and in
//! webhook mode at least one way to know a request comes from Feishu (`encrypt_key`, or else
//! `verification_token`); secrets are [`SecretString`]s. Every rejection is a
//! [`FeishuConfigError`] naming its key and what to write instead.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use workmate_adapter::config::{
    BadAdminId, BadUrl, InvalidKey, REDACTED, UnknownMode, admin_ids, api_base, hidden, mode_of,
    plain, secret,
};

/// Feishu's open platform (Lark's is `https://open.larksuite.com`).
pub const DEFAULT_API_BASE: &str = crate::web::FEISHU_API_BASE;

/// `[platforms.feishu]` as written (and as rendered back, secrets as `***`); the keys are
/// documented on [`FeishuConfig`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawFeishu {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypt_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admins: Option<Vec<String>>,
}

/// `[platforms.feishu]`.
#[derive(Clone, Debug)]
pub struct FeishuConfig {
    /// `app_id`: the app's id (`cli_…`).
    pub app_id: String,
    /// `app_secret`: fetches the app's `tenant_access_token` and opens the long connection.
    pub app_secret: SecretString,
    /// `encrypt_key`: decrypts events and checks `X-Lark-Signature` (webhook mode).
    pub encrypt_key: Option<SecretString>,
    /// `verification_token`: checked on every webhook request that carries one.
    pub verification_token: Option<SecretString>,
    /// `mode`: how events arrive.
    pub mode: FeishuMode,
    /// `api_base`: the open platform's base URL (default `https://open.feishu.cn`; Lark's
    /// international one is `https://open.larksuite.com`).
    pub api_base: String,
    /// `admins`: Feishu `open_id`s (`ou_…`) made tenant admins the first time workmate sees them.
    pub admins: Vec<String>,
}

impl FeishuConfig {
    /// A configuration for tests and embedders, in webhook mode.
    pub fn webhook(
        app_id: &str,
        app_secret: SecretString,
        encrypt_key: Option<SecretString>,
        verification_token: Option<SecretString>,
        api_base: &str,
    ) -> Self {
        Self {
            app_id: app_id.to_owned(),
            app_secret,
            encrypt_key,
            verification_token,
            mode: FeishuMode::Webhook,
            api_base: api_base.to_owned(),
            admins: Vec::new(),
        }
    }

    /// The same configuration with these admins.
    pub fn with_admins(mut self, admins: Vec<String>) -> Self {
        self.admins = admins;
        self
    }

    /// The same configuration in long-connection mode.
    pub fn long_connection(mut self) -> Self {
        self.mode = FeishuMode::LongConnection;
        self
    }

    /// Checks the section as written. The first problem found is reported.
    pub fn validate(raw: &RawFeishu) -> Result<Self, FeishuConfigError> {
        let mode = mode_of(
            "Feishu",
            raw.mode.as_deref(),
            &[
                ("webhook", FeishuMode::Webhook),
                ("long_connection", FeishuMode::LongConnection),
            ],
        )?;
        let app_id = plain(raw.app_id.as_deref()).ok_or(FeishuConfigError::NoAppId)?;
        let app_secret = secret(raw.app_secret.as_deref()).ok_or(FeishuConfigError::NoAppSecret)?;
        let encrypt_key = secret(raw.encrypt_key.as_deref());
        let verification_token = secret(raw.verification_token.as_deref());
        if mode == FeishuMode::Webhook && encrypt_key.is_none() && verification_token.is_none() {
            return Err(FeishuConfigError::WebhookUnverified);
        }
        Ok(Self {
            app_id,
            app_secret,
            encrypt_key,
            verification_token,
            mode,
            api_base: api_base(raw.api_base.as_deref(), DEFAULT_API_BASE)?,
            admins: admin_ids(raw.admins.as_deref(), "ou_0123abcd")?,
        })
    }

    /// The section as it would be written, every secret as `***`.
    pub fn redacted(&self) -> RawFeishu {
        RawFeishu {
            app_id: Some(self.app_id.clone()),
            app_secret: Some(REDACTED.to_owned()),
            encrypt_key: hidden(self.encrypt_key.as_ref()),
            verification_token: hidden(self.verification_token.as_ref()),
            mode: Some(self.mode.as_str().to_owned()),
            api_base: Some(self.api_base.clone()),
            admins: (!self.admins.is_empty()).then(|| self.admins.clone()),
        }
    }
}

/// How Feishu delivers events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeishuMode {
    /// Events and card callbacks posted to workmate's routes.
    Webhook,
    /// A long connection workmate opens with the app's credentials (no public URL needed).
    LongConnection,
}

impl FeishuMode {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::LongConnection => "long_connection",
        }
    }
}

/// Why a `[platforms.feishu]` section cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FeishuConfigError {
    /// `mode` is neither `webhook` nor `long_connection`.
    #[error(transparent)]
    Mode(#[from] UnknownMode),
    /// `app_id` is unset.
    #[error("app_id (cli_…) is required for Feishu")]
    NoAppId,
    /// `app_secret` is unset.
    #[error("app_secret is required for Feishu")]
    NoAppSecret,
    /// Webhook mode with neither `encrypt_key` nor `verification_token`.
    #[error(
        "webhook mode needs encrypt_key (recommended: requests are then signed and encrypted) or \
         at least verification_token, to know requests come from Feishu"
    )]
    WebhookUnverified,
    /// `api_base` is not an http(s) URL.
    #[error(transparent)]
    ApiBase(#[from] BadUrl),
    /// An `admins` entry is not a user id.
    #[error(transparent)]
    Admin(#[from] BadAdminId),
}

impl InvalidKey for FeishuConfigError {
    fn key(&self) -> &'static str {
        match self {
            Self::Mode(_) => "mode",
            Self::NoAppId => "app_id",
            Self::NoAppSecret => "app_secret",
            Self::WebhookUnverified => "encrypt_key",
            Self::ApiBase(_) => "api_base",
            Self::Admin(_) => "admins",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw() -> RawFeishu {
        RawFeishu {
            app_id: Some("cli_1".into()),
            app_secret: Some("s".into()),
            ..RawFeishu::default()
        }
    }

    #[test]
    fn a_webhook_needs_a_way_to_verify_requests() {
        let unverified = FeishuConfig::validate(&raw()).err();
        assert_eq!(
            unverified.as_ref().map(InvalidKey::key),
            Some("encrypt_key")
        );

        let long = RawFeishu {
            mode: Some("long_connection".into()),
            ..raw()
        };
        let config = FeishuConfig::validate(&long).ok();
        assert_eq!(
            config.as_ref().map(|c| c.mode),
            Some(FeishuMode::LongConnection)
        );
        assert_eq!(
            config.map(|c| c.api_base).as_deref(),
            Some(DEFAULT_API_BASE)
        );
    }

    #[test]
    fn the_rendered_section_hides_every_secret() {
        let config =
            FeishuConfig::webhook("cli_1", "s".into(), Some("k".into()), None, "https://x");
        let shown = config.redacted();
        assert_eq!(shown.app_secret.as_deref(), Some(REDACTED));
        assert_eq!(shown.encrypt_key.as_deref(), Some(REDACTED));
        assert_eq!(shown.verification_token, None);
        assert_eq!(shown.app_id.as_deref(), Some("cli_1"));
    }
}
