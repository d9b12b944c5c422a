//! `[platforms.*]`: the chat platforms workmate answers on.
//!
//! Invariant: a configured platform has every secret it needs to verify inbound requests and to
//! call the platform back, kept as [`SecretString`]s; an absent section means the platform's
//! routes answer 404. Slack runs in HTTP mode (signed requests to workmate's routes, which need
//! `signing_secret`) or in Socket Mode (a WebSocket opened with the app-level `app_token`).

use secrecy::SecretString;
use workmate_adapter::config::InvalidKey;
pub use workmate_feishu::config::{FeishuConfig, FeishuMode};
pub use workmate_slack::config::{SlackConfig, SlackMode};
pub use workmate_wecom::config::{WeComConfig, WeComMode};

use super::ConfigError;
use super::dingtalk::{DingTalkConfig, validate_dingtalk};
use super::validate::RawPlatforms;

pub(crate) type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

const SLACK: &str = "platforms.slack";
const FEISHU: &str = "platforms.feishu";
const WECOM: &str = "platforms.wecom";

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

pub(crate) fn validate_platforms(
    raw: &RawPlatforms,
    invalid: Invalid<'_>,
) -> Result<PlatformsConfig, ConfigError> {
    Ok(PlatformsConfig {
        slack: section(SLACK, raw.slack.as_ref(), SlackConfig::validate, invalid)?,
        feishu: section(FEISHU, raw.feishu.as_ref(), FeishuConfig::validate, invalid)?,
        wecom: section(WECOM, raw.wecom.as_ref(), WeComConfig::validate, invalid)?,
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
