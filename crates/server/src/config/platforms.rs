//! `[platforms.*]`: the chat platforms workmate answers on.
//!
//! Invariant: a configured platform has every secret it needs to verify inbound requests and to
//! call the platform back, kept as [`SecretString`]s; an absent section means the platform's
//! routes answer 404. Slack runs in HTTP mode (signed requests to workmate's routes, which need
//! `signing_secret`) or in Socket Mode (a WebSocket opened with the app-level `app_token`).

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
    /// `signing_secret`: verifies that requests come from Slack. Required in HTTP mode; in
    /// Socket Mode, without it the HTTP routes refuse every request.
    pub signing_secret: Option<SecretString>,
    /// `app_token`: the app-level `xapp-…` token that opens Socket Mode connections. Required in
    /// Socket Mode.
    pub app_token: Option<SecretString>,
    /// `bot_token`: the `xoxb-…` token of the Web API calls.
    pub bot_token: SecretString,
    /// `api_base`: the Web API's base URL (default `https://slack.com/api`).
    pub api_base: String,
    /// `mode`: how events arrive.
    pub mode: SlackMode,
    /// `admins`: Slack user ids (`U…`) made tenant admins the first time workmate sees them.
    pub admins: Vec<String>,
}

impl SlackConfig {
    /// A configuration for tests and embedders, in HTTP mode.
    pub fn http(signing_secret: SecretString, bot_token: SecretString, api_base: &str) -> Self {
        Self {
            signing_secret: Some(signing_secret),
            app_token: None,
            bot_token,
            api_base: api_base.to_owned(),
            mode: SlackMode::Http,
            admins: Vec::new(),
        }
    }

    /// A configuration for tests and embedders, in Socket Mode.
    pub fn socket(app_token: SecretString, bot_token: SecretString, api_base: &str) -> Self {
        Self {
            signing_secret: None,
            app_token: Some(app_token),
            bot_token,
            api_base: api_base.to_owned(),
            mode: SlackMode::Socket,
            admins: Vec::new(),
        }
    }
}

/// How Slack delivers events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlackMode {
    /// The Events API and interactivity posted to workmate's HTTP routes.
    Http,
    /// Socket Mode: a WebSocket workmate opens with the app-level token.
    Socket,
}

impl SlackMode {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Socket => "socket",
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
    let optional = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| SecretString::from(v.to_owned()))
    };
    let mode = match raw.mode.as_deref() {
        None | Some("http") => SlackMode::Http,
        Some("socket") => SlackMode::Socket,
        Some(other) => {
            return Err(invalid(
                SLACK,
                "mode",
                format!("`{other}` is not a Slack mode; use \"http\" or \"socket\""),
            ));
        }
    };
    let signing_secret = optional(&raw.signing_secret);
    let app_token = optional(&raw.app_token);
    let bot_token = optional(&raw.bot_token)
        .ok_or_else(|| invalid(SLACK, "bot_token", "bot_token is required for Slack".into()))?;
    match mode {
        SlackMode::Http if signing_secret.is_none() => {
            return Err(invalid(
                SLACK,
                "signing_secret",
                "signing_secret is required for Slack in mode = \"http\"".into(),
            ));
        }
        SlackMode::Socket if app_token.is_none() => {
            return Err(invalid(
                SLACK,
                "app_token",
                "app_token (the app-level xapp-… token with connections:write) is required for \
                 Slack in mode = \"socket\""
                    .into(),
            ));
        }
        _ => {}
    }
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
    let mut admins = Vec::new();
    for admin in raw.admins.iter().flatten().map(|a| a.trim()) {
        if admin.is_empty() || admin.contains(char::is_whitespace) {
            return Err(invalid(
                SLACK,
                "admins",
                format!("{admin:?} is not a Slack user id (like \"U0123ABCD\")"),
            ));
        }
        admins.push(admin.to_owned());
    }
    Ok(SlackConfig {
        signing_secret,
        app_token,
        bot_token,
        api_base,
        mode,
        admins,
    })
}
