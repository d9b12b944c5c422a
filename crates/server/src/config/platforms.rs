//! `[platforms.*]`: the chat platforms workmate answers on.
//!
//! Invariant: a configured platform has every secret it needs to verify inbound requests and to
//! call the platform back, kept as [`SecretString`]s; an absent section means the platform's
//! routes answer 404. Only Slack's HTTP (Events API) mode is accepted for now.

use secrecy::SecretString;

use super::ConfigError;
use super::validate::{RawPlatforms, RawSlack};

/// Slack's Web API.
pub(crate) const DEFAULT_SLACK_API_BASE: &str = "https://slack.com/api";

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

const SLACK: &str = "platforms.slack";

/// `[platforms.*]`.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct PlatformsConfig {
    /// `[platforms.slack]`, when configured.
    pub slack: Option<SlackConfig>,
}

/// `[platforms.slack]`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SlackConfig {
    /// `signing_secret`: verifies that requests come from Slack.
    pub signing_secret: SecretString,
    /// `bot_token`: the `xoxb-…` token of the Web API calls.
    pub bot_token: SecretString,
    /// `api_base`: the Web API's base URL (default `https://slack.com/api`).
    pub api_base: String,
    /// `mode`: how events arrive (only `http` for now).
    pub mode: SlackMode,
}

impl SlackConfig {
    /// A configuration for tests and embedders, in HTTP mode.
    pub fn http(signing_secret: SecretString, bot_token: SecretString, api_base: &str) -> Self {
        Self {
            signing_secret,
            bot_token,
            api_base: api_base.to_owned(),
            mode: SlackMode::Http,
        }
    }
}

/// How Slack delivers events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlackMode {
    /// The Events API and interactivity posted to workmate's HTTP routes.
    Http,
}

impl SlackMode {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
        }
    }
}

pub(crate) fn validate_platforms(
    raw: &RawPlatforms,
    invalid: Invalid<'_>,
) -> Result<PlatformsConfig, ConfigError> {
    Ok(PlatformsConfig {
        slack: raw
            .slack
            .as_ref()
            .map(|slack| validate_slack(slack, invalid))
            .transpose()?,
    })
}

fn validate_slack(raw: &RawSlack, invalid: Invalid<'_>) -> Result<SlackConfig, ConfigError> {
    let secret = |key: &'static str, value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| SecretString::from(v.to_owned()))
            .ok_or_else(|| invalid(SLACK, key, format!("{key} is required for Slack")))
    };
    let signing_secret = secret("signing_secret", &raw.signing_secret)?;
    let bot_token = secret("bot_token", &raw.bot_token)?;
    let api_base = raw
        .api_base
        .clone()
        .unwrap_or_else(|| DEFAULT_SLACK_API_BASE.to_owned());
    let parsed = url::Url::parse(&api_base).map_err(|e| {
        invalid(
            SLACK,
            "api_base",
            format!("{api_base:?} is not a URL ({e})"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(
            SLACK,
            "api_base",
            format!("{api_base:?} must be http:// or https://"),
        ));
    }
    let mode = match raw.mode.as_deref() {
        None | Some("http") => SlackMode::Http,
        Some("socket") => {
            return Err(invalid(
                SLACK,
                "mode",
                "Socket Mode is not supported yet; use mode = \"http\"".into(),
            ));
        }
        Some(other) => {
            return Err(invalid(
                SLACK,
                "mode",
                format!("`{other}` is not a Slack mode; use \"http\""),
            ));
        }
    };
    Ok(SlackConfig {
        signing_secret,
        bot_token,
        api_base,
        mode,
    })
}
