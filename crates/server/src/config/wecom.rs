//! `[platforms.wecom]`: WeCom's smart robot (智能机器人), and the self-built app (自建应用)
//! beside it.
//!
//! Invariant: a configured WeCom has what its mode needs to verify and decrypt callbacks
//! (`token`, a 43-character `encoding_aes_key`) or to open the long connection (`bot_id`,
//! `secret`); secrets are [`SecretString`]s and are rendered as `***`.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::platforms::{Invalid, admin_ids, api_base, mode_of, secret};

const WECOM: &str = "platforms.wecom";
/// WeCom's server API.
pub(crate) const DEFAULT_WECOM_API_BASE: &str = "https://qyapi.weixin.qq.com";
/// Characters of an `EncodingAESKey`.
const AES_KEY_CHARS: usize = 43;

/// `[platforms.wecom]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWeCom {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) corp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encoding_aes_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) bot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_id: Option<AgentId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) admins: Option<Vec<String>>,
}

/// An `agent_id` as written: WeCom shows it as a number, and a string is accepted too.
#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub(crate) enum AgentId {
    Number(i64),
    Text(String),
}

/// `[platforms.wecom]`.
#[derive(Clone, Debug)]
pub struct WeComConfig {
    /// `corp_id`: the corp (企业ID); it names the tenant.
    pub corp_id: String,
    /// `token`: signs callbacks (callback mode).
    pub token: Option<SecretString>,
    /// `encoding_aes_key`: decrypts callbacks (callback mode), 43 characters.
    pub encoding_aes_key: Option<SecretString>,
    /// `bot_id`: the smart robot's id (long-connection mode).
    pub bot_id: Option<String>,
    /// `agent_id`: the self-built app's AgentId, when one is configured.
    pub agent_id: Option<String>,
    /// `secret`: the smart robot's secret (long-connection mode), or the self-built app's.
    pub secret: Option<SecretString>,
    /// `mode`: how callbacks arrive.
    pub mode: WeComMode,
    /// `api_base`: WeCom's server API (default `https://qyapi.weixin.qq.com`).
    pub api_base: String,
    /// `admins`: WeCom userids made tenant admins the first time workmate sees them.
    pub admins: Vec<String>,
}

impl WeComConfig {
    /// A configuration for tests and embedders, in callback mode.
    pub fn callback(
        corp_id: &str,
        token: SecretString,
        encoding_aes_key: SecretString,
        api_base: &str,
    ) -> Self {
        Self {
            corp_id: corp_id.to_owned(),
            token: Some(token),
            encoding_aes_key: Some(encoding_aes_key),
            bot_id: None,
            agent_id: None,
            secret: None,
            mode: WeComMode::Callback,
            api_base: api_base.to_owned(),
            admins: Vec::new(),
        }
    }

    /// The same configuration with these admins.
    pub fn with_admins(mut self, admins: Vec<String>) -> Self {
        self.admins = admins;
        self
    }
}

/// How WeCom's smart robot reaches workmate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeComMode {
    /// Encrypted callbacks posted to `/v1/platforms/wecom/callback`.
    Callback,
    /// A WebSocket workmate opens with the robot's `bot_id` and `secret`.
    LongConnection,
}

impl WeComMode {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Callback => "callback",
            Self::LongConnection => "long_connection",
        }
    }
}

pub(crate) fn validate_wecom(
    raw: &RawWeCom,
    invalid: Invalid<'_>,
) -> Result<WeComConfig, ConfigError> {
    let mode = mode_of(
        WECOM,
        "WeCom",
        raw.mode.as_deref(),
        &[
            ("callback", WeComMode::Callback),
            ("long_connection", WeComMode::LongConnection),
        ],
        invalid,
    )?;
    let corp_id = raw
        .corp_id
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            invalid(
                WECOM,
                "corp_id",
                "corp_id (企业ID, like ww0123456789abcdef) is required for WeCom".into(),
            )
        })?
        .to_owned();
    let token = secret(&raw.token);
    let encoding_aes_key = secret(&raw.encoding_aes_key);
    if mode == WeComMode::Callback {
        if token.is_none() {
            return Err(invalid(
                WECOM,
                "token",
                "token is required in callback mode: it is the Token the robot's API settings \
                 show"
                    .into(),
            ));
        }
        let key_len = raw
            .encoding_aes_key
            .as_deref()
            .map_or(0, |k| k.trim().chars().count());
        if key_len != AES_KEY_CHARS {
            return Err(invalid(
                WECOM,
                "encoding_aes_key",
                format!(
                    "encoding_aes_key must be the {AES_KEY_CHARS}-character EncodingAESKey the \
                     robot's API settings show (this one has {key_len})"
                ),
            ));
        }
    }
    let bot_id = raw
        .bot_id
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty());
    if mode == WeComMode::LongConnection && (bot_id.is_none() || secret(&raw.secret).is_none()) {
        return Err(invalid(
            WECOM,
            "bot_id",
            "long_connection mode needs bot_id and secret: the smart robot's Bot ID and Secret \
             from its API settings (长连接)"
                .into(),
        ));
    }
    let plain = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    Ok(WeComConfig {
        corp_id,
        token,
        encoding_aes_key,
        bot_id: plain(&raw.bot_id),
        agent_id: match &raw.agent_id {
            Some(AgentId::Number(n)) => Some(n.to_string()),
            Some(AgentId::Text(t)) => plain(&Some(t.clone())),
            None => None,
        },
        secret: secret(&raw.secret),
        mode,
        api_base: api_base(
            WECOM,
            raw.api_base.as_ref(),
            DEFAULT_WECOM_API_BASE,
            invalid,
        )?,
        admins: admin_ids(WECOM, raw.admins.as_ref(), "zhangsan", invalid)?,
    })
}

/// `[platforms.wecom]` for `config show`, secrets as `***`.
pub(crate) fn render_wecom(config: &WeComConfig) -> RawWeCom {
    let hidden = |s: &Option<SecretString>| s.as_ref().map(|_| "***".to_owned());
    RawWeCom {
        corp_id: Some(config.corp_id.clone()),
        token: hidden(&config.token),
        encoding_aes_key: hidden(&config.encoding_aes_key),
        bot_id: config.bot_id.clone(),
        agent_id: config.agent_id.clone().map(AgentId::Text),
        secret: hidden(&config.secret),
        mode: Some(config.mode.as_str().to_owned()),
        api_base: Some(config.api_base.clone()),
        admins: (!config.admins.is_empty()).then(|| config.admins.clone()),
    }
}
