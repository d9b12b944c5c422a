//! `[platforms.dingtalk]`: a DingTalk (钉钉) app's robot, over the Stream connection or HTTP
//! callbacks, as written ([`RawDingTalk`]) and validated ([`DingTalkConfig`]). Not to be
//! confused with [`crate::DingTalkConfig`], the card settings a [`crate::DingTalkPlatform`] is
//! built with, which the embedder derives from this section.
//!
//! Invariant: a configured DingTalk has the app's credentials (`client_id`, `client_secret`)
//! and the approval card's template; the encrypted event push is served only when both its
//! `token` and its `encoding_aes_key` (43 characters) are set; `admins` come with the
//! organisation (`corp_id`) they are admins of; secrets are [`SecretString`]s and are rendered as
//! `***`. Every rejection is a [`DingTalkConfigError`] naming its key and what to write instead.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use workmate_adapter::config::{
    BadAdminId, BadUrl, InvalidKey, REDACTED, UnknownMode, admin_ids, api_base, hidden, mode_of,
    plain, secret,
};

/// DingTalk's open platform, which also opens Stream connections.
pub const DEFAULT_API_BASE: &str = crate::web::DINGTALK_API_BASE;
/// The answer card's default template: DingTalk's public AI markdown card, whose streaming
/// variable is `content` (the one the official Stream SDKs use). An imported
/// `templates/answer.json` can replace it.
pub const DEFAULT_ANSWER_TEMPLATE_ID: &str = "382e4302-551d-4880-bf29-a30acfab2e71.schema";
/// The default `callbackRouteKey` approval cards carry in HTTP mode.
pub const DEFAULT_CALLBACK_ROUTE_KEY: &str = "workmate";
/// Characters of an event subscription's `aes_key`.
const AES_KEY_CHARS: usize = 43;

/// `[platforms.dingtalk]` as written (and as rendered back, secrets as `***`); the keys are
/// documented on [`DingTalkConfig`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawDingTalk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_template_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_template_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_route_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding_aes_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admins: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corp_id: Option<String>,
}

/// `[platforms.dingtalk]`.
#[derive(Clone, Debug)]
pub struct DingTalkConfig {
    /// `client_id`: the app's Client ID (AppKey), which is also its robot code.
    pub client_id: String,
    /// `client_secret`: the app's Client Secret (AppSecret): fetches access tokens, opens the
    /// Stream connection, and checks HTTP callbacks' signatures.
    pub client_secret: SecretString,
    /// `card_template_id`: the approval card's template (`templates/approval.json`, imported).
    pub card_template_id: String,
    /// `answer_template_id`: the answer card's AI card template, whose streaming markdown
    /// variable is `content` (default [`DEFAULT_ANSWER_TEMPLATE_ID`]).
    pub answer_template_id: String,
    /// `mode`: how robot messages and card clicks arrive.
    pub mode: DingTalkMode,
    /// `api_base`: the open platform (default `https://api.dingtalk.com`).
    pub api_base: String,
    /// `gateway_base`: where Stream connections are opened (`POST
    /// {gateway_base}/v1.0/gateway/connections/open`; default `https://api.dingtalk.com`).
    pub gateway_base: String,
    /// `callback_route_key`: the `callbackRouteKey` approval cards carry in HTTP mode, registered
    /// with DingTalk for `POST /v1/platforms/dingtalk/card` (default `workmate`).
    pub callback_route_key: String,
    /// `token`: signs the encrypted event push (the event subscription's 签名 Token).
    pub token: Option<SecretString>,
    /// `encoding_aes_key`: decrypts the event push (the subscription's 加密 aes_key).
    pub encoding_aes_key: Option<SecretString>,
    /// `admins`: DingTalk user ids (staff ids) made tenant admins the first time workmate sees
    /// them, in the organisation `corp_id` only.
    pub admins: Vec<String>,
    /// `corp_id`: the organisation (`corpId`, like `ding…`) this app serves. Robot messages and
    /// card clicks from any other are refused, and `admins` are admins only there. Required
    /// with `admins`.
    pub corp_id: Option<String>,
}

impl DingTalkConfig {
    /// A configuration for tests and embedders, in Stream mode, with the default answer
    /// template and both the API and the Stream gateway at `api_base`.
    pub fn stream(
        client_id: &str,
        client_secret: SecretString,
        card_template_id: &str,
        api_base: &str,
    ) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret,
            card_template_id: card_template_id.to_owned(),
            answer_template_id: DEFAULT_ANSWER_TEMPLATE_ID.to_owned(),
            mode: DingTalkMode::Stream,
            api_base: api_base.to_owned(),
            gateway_base: api_base.to_owned(),
            callback_route_key: DEFAULT_CALLBACK_ROUTE_KEY.to_owned(),
            token: None,
            encoding_aes_key: None,
            admins: Vec::new(),
            corp_id: None,
        }
    }

    /// The same configuration in HTTP mode.
    pub fn http(mut self) -> Self {
        self.mode = DingTalkMode::Http;
        self
    }

    /// The same configuration with the event push's `token` and `encoding_aes_key`.
    pub fn with_event_push(mut self, token: SecretString, encoding_aes_key: SecretString) -> Self {
        self.token = Some(token);
        self.encoding_aes_key = Some(encoding_aes_key);
        self
    }

    /// The same configuration with these admins, of organisation `corp_id`.
    pub fn with_admins(mut self, corp_id: &str, admins: Vec<String>) -> Self {
        self.corp_id = Some(corp_id.to_owned());
        self.admins = admins;
        self
    }

    /// Checks the section as written. The first problem found is reported.
    pub fn validate(raw: &RawDingTalk) -> Result<Self, DingTalkConfigError> {
        use DingTalkConfigError as E;
        let mode = mode_of(
            "DingTalk",
            raw.mode.as_deref(),
            &[
                ("stream", DingTalkMode::Stream),
                ("http", DingTalkMode::Http),
            ],
        )?;
        let client_id = plain(raw.client_id.as_deref()).ok_or(E::NoClientId)?;
        let client_secret = secret(raw.client_secret.as_deref()).ok_or(E::NoClientSecret)?;
        let card_template_id = plain(raw.card_template_id.as_deref()).ok_or(E::NoCardTemplate)?;
        let token = secret(raw.token.as_deref());
        let encoding_aes_key = secret(raw.encoding_aes_key.as_deref());
        match (&token, &encoding_aes_key) {
            (None, None) => {}
            (Some(_), None) | (None, Some(_)) => return Err(E::HalfEventPush),
            (Some(_), Some(_)) => {
                let chars = raw
                    .encoding_aes_key
                    .as_deref()
                    .map_or(0, |k| k.trim().chars().count());
                if chars != AES_KEY_CHARS {
                    return Err(E::AesKeyLength { chars });
                }
            }
        }
        let admins = admin_ids(raw.admins.as_deref(), "manager1234")?;
        let corp_id = plain(raw.corp_id.as_deref());
        if !admins.is_empty() && corp_id.is_none() {
            return Err(E::AdminsWithoutCorp);
        }
        let callback_route_key = plain(raw.callback_route_key.as_deref())
            .unwrap_or_else(|| DEFAULT_CALLBACK_ROUTE_KEY.to_owned());
        if callback_route_key.contains(char::is_whitespace) {
            return Err(E::RouteKey {
                given: callback_route_key,
            });
        }
        let api = api_base(raw.api_base.as_deref(), DEFAULT_API_BASE)?;
        let gateway_base = match &raw.gateway_base {
            None => api.clone(),
            Some(gateway) => api_base(Some(gateway), &api).map_err(|_| E::GatewayBase {
                given: gateway.clone(),
            })?,
        };
        Ok(Self {
            client_id,
            client_secret,
            card_template_id,
            answer_template_id: plain(raw.answer_template_id.as_deref())
                .unwrap_or_else(|| DEFAULT_ANSWER_TEMPLATE_ID.to_owned()),
            mode,
            api_base: api,
            gateway_base,
            callback_route_key,
            token,
            encoding_aes_key,
            admins,
            corp_id,
        })
    }

    /// The section as it would be written, every secret as `***`.
    pub fn redacted(&self) -> RawDingTalk {
        RawDingTalk {
            client_id: Some(self.client_id.clone()),
            client_secret: Some(REDACTED.to_owned()),
            card_template_id: Some(self.card_template_id.clone()),
            answer_template_id: Some(self.answer_template_id.clone()),
            mode: Some(self.mode.as_str().to_owned()),
            api_base: Some(self.api_base.clone()),
            gateway_base: Some(self.gateway_base.clone()),
            callback_route_key: Some(self.callback_route_key.clone()),
            token: hidden(self.token.as_ref()),
            encoding_aes_key: hidden(self.encoding_aes_key.as_ref()),
            admins: (!self.admins.is_empty()).then(|| self.admins.clone()),
            corp_id: self.corp_id.clone(),
        }
    }
}

/// How DingTalk reaches workmate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DingTalkMode {
    /// A WebSocket workmate opens with the app's credentials (no public URL needed).
    Stream,
    /// The robot's and cards' callbacks posted to workmate's routes.
    Http,
}

impl DingTalkMode {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stream => "stream",
            Self::Http => "http",
        }
    }
}

/// Why a `[platforms.dingtalk]` section cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DingTalkConfigError {
    /// `mode` is neither `stream` nor `http`.
    #[error(transparent)]
    Mode(#[from] UnknownMode),
    /// `client_id` is unset.
    #[error(
        "client_id is required for DingTalk: the app's Client ID (AppKey, like dingabc123xyz) \
         from its credentials page"
    )]
    NoClientId,
    /// `client_secret` is unset.
    #[error(
        "client_secret is required for DingTalk: the app's Client Secret (AppSecret) from its \
         credentials page"
    )]
    NoClientSecret,
    /// `card_template_id` is unset.
    #[error(
        "card_template_id is required for DingTalk: the id of the approval card template \
         (adapters/dingtalk/templates/approval.json) imported in DingTalk's card platform"
    )]
    NoCardTemplate,
    /// Only one of `token` and `encoding_aes_key` is set.
    #[error(
        "the encrypted event push needs both token and encoding_aes_key (the event \
         subscription's 签名 Token and 加密 aes_key); set both or neither"
    )]
    HalfEventPush,
    /// An `encoding_aes_key` that is not 43 characters.
    #[error(
        "encoding_aes_key must be the {AES_KEY_CHARS}-character aes_key of the app's event \
         subscription (this one has {chars})"
    )]
    AesKeyLength {
        /// The characters the key given has.
        chars: usize,
    },
    /// `admins` without the organisation they belong to.
    #[error(
        "admins need corp_id, the organisation they are admins of (its corpId, like \
         ding1234abcd, from the developer console): a staff id is only unique within one \
         organisation, and anyone who installs the app in another could claim it"
    )]
    AdminsWithoutCorp,
    /// A `callback_route_key` with spaces.
    #[error("{given:?} is not a callbackRouteKey (no spaces)")]
    RouteKey {
        /// The key as written, trimmed.
        given: String,
    },
    /// `api_base` is not an http(s) URL.
    #[error(transparent)]
    ApiBase(#[from] BadUrl),
    /// `gateway_base` is not an http(s) URL.
    #[error("{given:?} is not an http:// or https:// URL")]
    GatewayBase {
        /// The value as written.
        given: String,
    },
    /// An `admins` entry is not a user id.
    #[error(transparent)]
    Admin(#[from] BadAdminId),
}

impl InvalidKey for DingTalkConfigError {
    fn key(&self) -> &'static str {
        match self {
            Self::Mode(_) => "mode",
            Self::NoClientId => "client_id",
            Self::NoClientSecret => "client_secret",
            Self::NoCardTemplate => "card_template_id",
            Self::HalfEventPush | Self::AesKeyLength { .. } => "encoding_aes_key",
            Self::AdminsWithoutCorp => "corp_id",
            Self::RouteKey { .. } => "callback_route_key",
            Self::ApiBase(_) => "api_base",
            Self::GatewayBase { .. } => "gateway_base",
            Self::Admin(_) => "admins",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw() -> RawDingTalk {
        RawDingTalk {
            client_id: Some("dingabc".into()),
            client_secret: Some("s".into()),
            card_template_id: Some("tpl".into()),
            ..RawDingTalk::default()
        }
    }

    #[test]
    fn admins_need_their_organisation() {
        let admins = RawDingTalk {
            admins: Some(vec!["manager1".into()]),
            ..raw()
        };
        let refused = DingTalkConfig::validate(&admins).err();
        assert_eq!(refused.as_ref().map(InvalidKey::key), Some("corp_id"));

        let with_corp = RawDingTalk {
            corp_id: Some("ding1".into()),
            ..admins
        };
        let config = DingTalkConfig::validate(&with_corp).ok();
        assert_eq!(config.as_ref().map(|c| c.mode), Some(DingTalkMode::Stream));
        assert_eq!(
            config.map(|c| c.gateway_base).as_deref(),
            Some(DEFAULT_API_BASE)
        );
    }

    #[test]
    fn a_bad_gateway_is_named_as_such() {
        let bad = RawDingTalk {
            gateway_base: Some("ftp://x".into()),
            ..raw()
        };
        let err = DingTalkConfig::validate(&bad).err();
        assert_eq!(err.as_ref().map(InvalidKey::key), Some("gateway_base"));
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("\"ftp://x\" is not an http:// or https:// URL")
        );
    }
}
