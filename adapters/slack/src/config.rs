//! `[platforms.slack]`: the Slack app workmate answers as, as written ([`RawSlack`]) and
//! validated ([`SlackConfig`]).
//!
//! Invariant: a [`SlackConfig`] has every secret its mode needs, kept as [`SecretString`]s: HTTP
//! mode (signed requests to workmate's routes) has `signing_secret`, Socket Mode (a WebSocket
//! opened with the app-level token) has `app_token`, and both have `bot_token`. Every rejection
//! is a [`SlackConfigError`] naming its key and what to write instead.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use workmate_adapter::config::{
    BadAdminId, BadUrl, InvalidKey, REDACTED, UnknownMode, admin_ids, api_base, hidden, mode_of,
    secret,
};

/// Slack's Web API.
pub const DEFAULT_API_BASE: &str = "https://slack.com/api";

/// `[platforms.slack]` as written (and as rendered back, secrets as `***`); the keys are
/// documented on [`SlackConfig`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlack {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admins: Option<Vec<String>>,
}

/// `[platforms.slack]`.
#[derive(Clone, Debug)]
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

    /// Checks the section as written. The first problem found is reported.
    pub fn validate(raw: &RawSlack) -> Result<Self, SlackConfigError> {
        let mode = mode_of(
            "Slack",
            raw.mode.as_deref(),
            &[("http", SlackMode::Http), ("socket", SlackMode::Socket)],
        )?;
        let signing_secret = secret(raw.signing_secret.as_deref());
        let app_token = secret(raw.app_token.as_deref());
        let bot_token = secret(raw.bot_token.as_deref()).ok_or(SlackConfigError::NoBotToken)?;
        match mode {
            SlackMode::Http if signing_secret.is_none() => {
                return Err(SlackConfigError::NoSigningSecret);
            }
            SlackMode::Socket if app_token.is_none() => return Err(SlackConfigError::NoAppToken),
            _ => {}
        }
        let api_base = api_base(raw.api_base.as_deref(), DEFAULT_API_BASE)?;
        let admins = admin_ids(raw.admins.as_deref(), "U0123ABCD")?;
        Ok(Self {
            signing_secret,
            app_token,
            bot_token,
            api_base,
            mode,
            admins,
        })
    }

    /// The section as it would be written, every secret as `***`.
    pub fn redacted(&self) -> RawSlack {
        RawSlack {
            signing_secret: hidden(self.signing_secret.as_ref()),
            bot_token: Some(REDACTED.to_owned()),
            app_token: hidden(self.app_token.as_ref()),
            api_base: Some(self.api_base.clone()),
            mode: Some(self.mode.as_str().to_owned()),
            admins: (!self.admins.is_empty()).then(|| self.admins.clone()),
        }
    }
}

/// How Slack delivers events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Why a `[platforms.slack]` section cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SlackConfigError {
    /// `mode` is neither `http` nor `socket`.
    #[error(transparent)]
    Mode(#[from] UnknownMode),
    /// `bot_token` is unset.
    #[error("bot_token is required for Slack")]
    NoBotToken,
    /// HTTP mode without `signing_secret`.
    #[error("signing_secret is required for Slack in mode = \"http\"")]
    NoSigningSecret,
    /// Socket Mode without `app_token`.
    #[error(
        "app_token (the app-level xapp-… token with connections:write) is required for Slack in \
         mode = \"socket\""
    )]
    NoAppToken,
    /// `api_base` is not an http(s) URL.
    #[error(transparent)]
    ApiBase(#[from] BadUrl),
    /// An `admins` entry is not a user id.
    #[error(transparent)]
    Admin(#[from] BadAdminId),
}

impl InvalidKey for SlackConfigError {
    fn key(&self) -> &'static str {
        match self {
            Self::Mode(_) => "mode",
            Self::NoBotToken => "bot_token",
            Self::NoSigningSecret => "signing_secret",
            Self::NoAppToken => "app_token",
            Self::ApiBase(_) => "api_base",
            Self::Admin(_) => "admins",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(mode: &str) -> RawSlack {
        RawSlack {
            bot_token: Some("xoxb-1".into()),
            mode: Some(mode.into()),
            ..RawSlack::default()
        }
    }

    #[test]
    fn each_mode_needs_its_secret() {
        let http = SlackConfig::validate(&raw("http")).err();
        assert_eq!(http.as_ref().map(InvalidKey::key), Some("signing_secret"));
        let socket = SlackConfig::validate(&raw("socket")).err();
        assert_eq!(socket.as_ref().map(InvalidKey::key), Some("app_token"));

        let with_secret = RawSlack {
            signing_secret: Some("s".into()),
            ..raw("http")
        };
        let config = SlackConfig::validate(&with_secret).ok();
        assert_eq!(config.as_ref().map(|c| c.mode), Some(SlackMode::Http));
        assert_eq!(
            config.map(|c| c.api_base).as_deref(),
            Some(DEFAULT_API_BASE)
        );
    }

    #[test]
    fn the_rendered_section_hides_every_secret() {
        let config = SlackConfig::http("sig".into(), "xoxb-1".into(), "https://x.test");
        let shown = config.redacted();
        assert_eq!(shown.signing_secret.as_deref(), Some(REDACTED));
        assert_eq!(shown.bot_token.as_deref(), Some(REDACTED));
        assert_eq!(shown.app_token, None);
        assert_eq!(shown.mode.as_deref(), Some("http"));
    }
}
