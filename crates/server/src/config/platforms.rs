//! `[platforms.*]`: the chat platforms workmate answers on.
//!
//! Invariant: a configured platform has every secret it needs to verify inbound requests and to
//! call the platform back, kept as [`SecretString`]s; an absent section means the platform's
//! routes answer 404. Slack runs in HTTP mode (signed requests to workmate's routes, which need
//! `signing_secret`) or in Socket Mode (a WebSocket opened with the app-level `app_token`).

use secrecy::SecretString;
use workmate_adapter::config::InvalidKey;
pub use workmate_slack::config::{SlackConfig, SlackMode};

use super::ConfigError;
use super::dingtalk::{DingTalkConfig, validate_dingtalk};
use super::validate::{RawFeishu, RawPlatforms};
use super::wecom::{WeComConfig, validate_wecom};

pub(crate) type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

const SLACK: &str = "platforms.slack";
const FEISHU: &str = "platforms.feishu";
/// Feishu's open platform (Lark's is `https://open.larksuite.com`).
pub(crate) const DEFAULT_FEISHU_API_BASE: &str = "https://open.feishu.cn";

/// `[platforms.*]`.
#[derive(Clone, Debug, Default)]
pub struct PlatformsConfig {
    /// `[platforms.slack]`, when configured.
    pub slack: Option<SlackConfig>,
    /// `[platforms.feishu]`, when configured.
    pub feishu: Option<FeishuConfig>,
    /// `[platforms.wecom]`, when configured.
    pub wecom: Option<WeComConfig>,
    /// `[platforms.dingtalk]`, when configured.
    pub dingtalk: Option<DingTalkConfig>,
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

pub(crate) fn validate_platforms(
    raw: &RawPlatforms,
    invalid: Invalid<'_>,
) -> Result<PlatformsConfig, ConfigError> {
    Ok(PlatformsConfig {
        slack: section(SLACK, raw.slack.as_ref(), SlackConfig::validate, invalid)?,
        feishu: raw
            .feishu
            .as_ref()
            .map(|feishu| validate_feishu(feishu, invalid))
            .transpose()?,
        wecom: raw
            .wecom
            .as_ref()
            .map(|wecom| validate_wecom(wecom, invalid))
            .transpose()?,
        dingtalk: raw
            .dingtalk
            .as_ref()
            .map(|dingtalk| validate_dingtalk(dingtalk, invalid))
            .transpose()?,
    })
}

/// A platform's section validated by its adapter, whose error becomes a [`ConfigError`] naming
/// the section and the key.
fn section<R, C, E: InvalidKey>(
    name: &'static str,
    raw: Option<&R>,
    validate: impl Fn(&R) -> Result<C, E>,
    invalid: Invalid<'_>,
) -> Result<Option<C>, ConfigError> {
    raw.map(|raw| validate(raw).map_err(|e| invalid(name, e.key(), e.to_string())))
        .transpose()
}

/// A platform's `mode`: the first of `modes` when unset, else the one named, or an error naming
/// them (`platform` as people write it, e.g. "Feishu").
pub(crate) fn mode_of<M: Copy>(
    section: &'static str,
    platform: &str,
    raw: Option<&str>,
    modes: &[(&str, M)],
    invalid: Invalid<'_>,
) -> Result<M, ConfigError> {
    let wanted = raw.unwrap_or(modes[0].0);
    if let Some((_, mode)) = modes.iter().find(|(name, _)| *name == wanted) {
        return Ok(*mode);
    }
    let names: Vec<String> = modes
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    Err(invalid(
        section,
        "mode",
        format!(
            "`{wanted}` is not a {platform} mode; use {}",
            names.join(" or ")
        ),
    ))
}

/// A set, non-blank secret.
pub(crate) fn secret(value: &Option<String>) -> Option<SecretString> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| SecretString::from(v.to_owned()))
}

/// An `api_base`: an http(s) URL, or `default`.
pub(crate) fn api_base(
    section: &'static str,
    raw: Option<&String>,
    default: &str,
    invalid: Invalid<'_>,
) -> Result<String, ConfigError> {
    let api_base = raw.cloned().unwrap_or_else(|| default.to_owned());
    let parsed = url::Url::parse(&api_base).map_err(|e| {
        invalid(
            section,
            "api_base",
            format!("{api_base:?} is not a URL ({e})"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(
            section,
            "api_base",
            format!("{api_base:?} must be http:// or https://"),
        ));
    }
    Ok(api_base)
}

/// `admins`: platform user ids, none blank or with spaces.
pub(crate) fn admin_ids(
    section: &'static str,
    raw: Option<&Vec<String>>,
    example: &str,
    invalid: Invalid<'_>,
) -> Result<Vec<String>, ConfigError> {
    let mut admins = Vec::new();
    for admin in raw.into_iter().flatten().map(|a| a.trim()) {
        if admin.is_empty() || admin.contains(char::is_whitespace) {
            return Err(invalid(
                section,
                "admins",
                format!("{admin:?} is not a user id (like \"{example}\")"),
            ));
        }
        admins.push(admin.to_owned());
    }
    Ok(admins)
}

fn validate_feishu(raw: &RawFeishu, invalid: Invalid<'_>) -> Result<FeishuConfig, ConfigError> {
    let mode = mode_of(
        FEISHU,
        "Feishu",
        raw.mode.as_deref(),
        &[
            ("webhook", FeishuMode::Webhook),
            ("long_connection", FeishuMode::LongConnection),
        ],
        invalid,
    )?;
    let app_id = raw
        .app_id
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            invalid(
                FEISHU,
                "app_id",
                "app_id (cli_…) is required for Feishu".into(),
            )
        })?
        .to_owned();
    let app_secret = secret(&raw.app_secret).ok_or_else(|| {
        invalid(
            FEISHU,
            "app_secret",
            "app_secret is required for Feishu".into(),
        )
    })?;
    let encrypt_key = secret(&raw.encrypt_key);
    let verification_token = secret(&raw.verification_token);
    if mode == FeishuMode::Webhook && encrypt_key.is_none() && verification_token.is_none() {
        return Err(invalid(
            FEISHU,
            "encrypt_key",
            "webhook mode needs encrypt_key (recommended: requests are then signed and \
             encrypted) or at least verification_token, to know requests come from Feishu"
                .into(),
        ));
    }
    Ok(FeishuConfig {
        app_id,
        app_secret,
        encrypt_key,
        verification_token,
        mode,
        api_base: api_base(
            FEISHU,
            raw.api_base.as_ref(),
            DEFAULT_FEISHU_API_BASE,
            invalid,
        )?,
        admins: admin_ids(FEISHU, raw.admins.as_ref(), "ou_0123abcd", invalid)?,
    })
}
