//! `[platforms.wecom]`: WeCom's smart robot (智能机器人), and the self-built app (自建应用)
//! beside it, as written ([`RawWeCom`]) and validated ([`WeComConfig`]).
//!
//! Invariant: a [`WeComConfig`] has what its mode needs to verify and decrypt callbacks
//! (`token`, a 43-character `encoding_aes_key`) or to open the long connection (`bot_id`,
//! `secret`); secrets are [`SecretString`]s and are rendered as `***`. Every rejection is a
//! [`WeComConfigError`] naming its key and what to write instead.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use workmate_adapter::config::{
    BadAdminId, BadUrl, InvalidKey, UnknownMode, admin_ids, api_base, hidden, mode_of, plain,
    secret,
};

/// WeCom's server API.
pub const DEFAULT_API_BASE: &str = "https://qyapi.weixin.qq.com";
/// Characters of an `EncodingAESKey`.
const AES_KEY_CHARS: usize = 43;

/// `[platforms.wecom]` as written (and as rendered back, secrets as `***`); the keys are
/// documented on [`WeComConfig`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeCom {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding_aes_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<AgentId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admins: Option<Vec<String>>,
}

/// An `agent_id` as written: WeCom shows it as a number, and a string is accepted too.
#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum AgentId {
    /// `agent_id = 1000002`.
    Number(i64),
    /// `agent_id = "1000002"`.
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

    /// Checks the section as written. The first problem found is reported.
    pub fn validate(raw: &RawWeCom) -> Result<Self, WeComConfigError> {
        let mode = mode_of(
            "WeCom",
            raw.mode.as_deref(),
            &[
                ("callback", WeComMode::Callback),
                ("long_connection", WeComMode::LongConnection),
            ],
        )?;
        let corp_id = plain(raw.corp_id.as_deref()).ok_or(WeComConfigError::NoCorpId)?;
        let token = secret(raw.token.as_deref());
        let encoding_aes_key = secret(raw.encoding_aes_key.as_deref());
        if mode == WeComMode::Callback {
            if token.is_none() {
                return Err(WeComConfigError::NoToken);
            }
            let chars = raw
                .encoding_aes_key
                .as_deref()
                .map_or(0, |k| k.trim().chars().count());
            if chars != AES_KEY_CHARS {
                return Err(WeComConfigError::AesKeyLength { chars });
            }
        }
        let bot_id = plain(raw.bot_id.as_deref());
        let secret = secret(raw.secret.as_deref());
        if mode == WeComMode::LongConnection && (bot_id.is_none() || secret.is_none()) {
            return Err(WeComConfigError::NoRobotCredentials);
        }
        Ok(Self {
            corp_id,
            token,
            encoding_aes_key,
            bot_id,
            agent_id: match &raw.agent_id {
                Some(AgentId::Number(n)) => Some(n.to_string()),
                Some(AgentId::Text(t)) => plain(Some(t)),
                None => None,
            },
            secret,
            mode,
            api_base: api_base(raw.api_base.as_deref(), DEFAULT_API_BASE)?,
            admins: admin_ids(raw.admins.as_deref(), "zhangsan")?,
        })
    }

    /// The section as it would be written, every secret as `***`.
    pub fn redacted(&self) -> RawWeCom {
        RawWeCom {
            corp_id: Some(self.corp_id.clone()),
            token: hidden(self.token.as_ref()),
            encoding_aes_key: hidden(self.encoding_aes_key.as_ref()),
            bot_id: self.bot_id.clone(),
            agent_id: self.agent_id.clone().map(AgentId::Text),
            secret: hidden(self.secret.as_ref()),
            mode: Some(self.mode.as_str().to_owned()),
            api_base: Some(self.api_base.clone()),
            admins: (!self.admins.is_empty()).then(|| self.admins.clone()),
        }
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

/// Why a `[platforms.wecom]` section cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WeComConfigError {
    /// `mode` is neither `callback` nor `long_connection`.
    #[error(transparent)]
    Mode(#[from] UnknownMode),
    /// `corp_id` is unset.
    #[error("corp_id (企业ID, like ww0123456789abcdef) is required for WeCom")]
    NoCorpId,
    /// Callback mode without `token`.
    #[error("token is required in callback mode: it is the Token the robot's API settings show")]
    NoToken,
    /// Callback mode with an `encoding_aes_key` that is not 43 characters.
    #[error(
        "encoding_aes_key must be the {AES_KEY_CHARS}-character EncodingAESKey the robot's API \
         settings show (this one has {chars})"
    )]
    AesKeyLength {
        /// The characters the key given has.
        chars: usize,
    },
    /// Long-connection mode without `bot_id` or `secret`.
    #[error(
        "long_connection mode needs bot_id and secret: the smart robot's Bot ID and Secret from \
         its API settings (长连接)"
    )]
    NoRobotCredentials,
    /// `api_base` is not an http(s) URL.
    #[error(transparent)]
    ApiBase(#[from] BadUrl),
    /// An `admins` entry is not a user id.
    #[error(transparent)]
    Admin(#[from] BadAdminId),
}

impl InvalidKey for WeComConfigError {
    fn key(&self) -> &'static str {
        match self {
            Self::Mode(_) => "mode",
            Self::NoCorpId => "corp_id",
            Self::NoToken => "token",
            Self::AesKeyLength { .. } => "encoding_aes_key",
            Self::NoRobotCredentials => "bot_id",
            Self::ApiBase(_) => "api_base",
            Self::Admin(_) => "admins",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn callback(key: &str) -> RawWeCom {
        RawWeCom {
            corp_id: Some("ww1".into()),
            token: Some("t".into()),
            encoding_aes_key: Some(key.into()),
            ..RawWeCom::default()
        }
    }

    #[test]
    fn the_aes_key_has_43_characters() {
        let short = WeComConfig::validate(&callback("abc")).err();
        assert_eq!(
            short.as_ref().map(InvalidKey::key),
            Some("encoding_aes_key")
        );
        assert!(short.is_some_and(|e| e.to_string().contains("(this one has 3)")));

        let config = WeComConfig::validate(&callback(&"a".repeat(AES_KEY_CHARS))).ok();
        assert_eq!(config.as_ref().map(|c| c.mode), Some(WeComMode::Callback));
        assert_eq!(
            config.map(|c| c.api_base).as_deref(),
            Some(DEFAULT_API_BASE)
        );
    }

    #[test]
    fn agent_id_is_a_number_or_a_string() {
        let raw = RawWeCom {
            agent_id: Some(AgentId::Number(1_000_002)),
            ..callback(&"a".repeat(AES_KEY_CHARS))
        };
        let config = WeComConfig::validate(&raw).ok();
        assert_eq!(config.and_then(|c| c.agent_id).as_deref(), Some("1000002"));
    }
}
