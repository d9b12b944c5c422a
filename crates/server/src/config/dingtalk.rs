//! `[platforms.dingtalk]`: a DingTalk (钉钉) app's robot, over the Stream connection or HTTP
//! callbacks.
//!
//! Invariant: a configured DingTalk has the app's credentials (`client_id`, `client_secret`)
//! and the approval card's template; the encrypted event push is served only when both its
//! `token` and its `encoding_aes_key` (43 characters) are set; secrets are [`SecretString`]s and
//! are rendered as `***`.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::platforms::{Invalid, admin_ids, api_base, mode_of, secret};

const DINGTALK: &str = "platforms.dingtalk";
/// DingTalk's open platform, which also opens Stream connections.
pub(crate) const DEFAULT_DINGTALK_API_BASE: &str = "https://api.dingtalk.com";
/// The answer card's default template: DingTalk's public AI markdown card, whose streaming
/// variable is `content` (the one the official Stream SDKs use). An imported
/// `templates/answer.json` can replace it.
pub const DEFAULT_ANSWER_TEMPLATE_ID: &str = "382e4302-551d-4880-bf29-a30acfab2e71.schema";
/// The default `callbackRouteKey` approval cards carry in HTTP mode.
pub const DEFAULT_CALLBACK_ROUTE_KEY: &str = "workmate";
/// Characters of an event subscription's `aes_key`.
const AES_KEY_CHARS: usize = 43;

/// `[platforms.dingtalk]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDingTalk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) card_template_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) answer_template_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gateway_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) callback_route_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encoding_aes_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) admins: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) corp_id: Option<String>,
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

pub(crate) fn validate_dingtalk(
    raw: &RawDingTalk,
    invalid: Invalid<'_>,
) -> Result<DingTalkConfig, ConfigError> {
    let mode = mode_of(
        DINGTALK,
        "DingTalk",
        raw.mode.as_deref(),
        &[
            ("stream", DingTalkMode::Stream),
            ("http", DingTalkMode::Http),
        ],
        invalid,
    )?;
    let plain = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let client_id = plain(&raw.client_id).ok_or_else(|| {
        invalid(
            DINGTALK,
            "client_id",
            "client_id is required for DingTalk: the app's Client ID (AppKey, like \
             dingabc123xyz) from its credentials page"
                .into(),
        )
    })?;
    let client_secret = secret(&raw.client_secret).ok_or_else(|| {
        invalid(
            DINGTALK,
            "client_secret",
            "client_secret is required for DingTalk: the app's Client Secret (AppSecret) from \
             its credentials page"
                .into(),
        )
    })?;
    let card_template_id = plain(&raw.card_template_id).ok_or_else(|| {
        invalid(
            DINGTALK,
            "card_template_id",
            "card_template_id is required for DingTalk: the id of the approval card template \
             (adapters/dingtalk/templates/approval.json) imported in DingTalk's card platform"
                .into(),
        )
    })?;
    let token = secret(&raw.token);
    let encoding_aes_key = secret(&raw.encoding_aes_key);
    match (&token, &encoding_aes_key) {
        (None, None) => {}
        (Some(_), None) | (None, Some(_)) => {
            return Err(invalid(
                DINGTALK,
                "encoding_aes_key",
                "the encrypted event push needs both token and encoding_aes_key (the event \
                 subscription's 签名 Token and 加密 aes_key); set both or neither"
                    .into(),
            ));
        }
        (Some(_), Some(_)) => {
            let key_len = raw
                .encoding_aes_key
                .as_deref()
                .map_or(0, |k| k.trim().chars().count());
            if key_len != AES_KEY_CHARS {
                return Err(invalid(
                    DINGTALK,
                    "encoding_aes_key",
                    format!(
                        "encoding_aes_key must be the {AES_KEY_CHARS}-character aes_key of the \
                         app's event subscription (this one has {key_len})"
                    ),
                ));
            }
        }
    }
    let admins = admin_ids(DINGTALK, raw.admins.as_ref(), "manager1234", invalid)?;
    let corp_id = plain(&raw.corp_id);
    if !admins.is_empty() && corp_id.is_none() {
        return Err(invalid(
            DINGTALK,
            "corp_id",
            "admins need corp_id, the organisation they are admins of (its corpId, like \
             ding1234abcd, from the developer console): a staff id is only unique within one \
             organisation, and anyone who installs the app in another could claim it"
                .into(),
        ));
    }
    let callback_route_key =
        plain(&raw.callback_route_key).unwrap_or_else(|| DEFAULT_CALLBACK_ROUTE_KEY.to_owned());
    if callback_route_key.contains(char::is_whitespace) {
        return Err(invalid(
            DINGTALK,
            "callback_route_key",
            format!("{callback_route_key:?} is not a callbackRouteKey (no spaces)"),
        ));
    }
    let api = api_base(
        DINGTALK,
        raw.api_base.as_ref(),
        DEFAULT_DINGTALK_API_BASE,
        invalid,
    )?;
    let gateway_base = match &raw.gateway_base {
        None => api.clone(),
        Some(gateway) => api_base(DINGTALK, Some(gateway), &api, invalid).map_err(|_| {
            invalid(
                DINGTALK,
                "gateway_base",
                format!("{gateway:?} is not an http:// or https:// URL"),
            )
        })?,
    };
    Ok(DingTalkConfig {
        client_id,
        client_secret,
        card_template_id,
        answer_template_id: plain(&raw.answer_template_id)
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

/// `[platforms.dingtalk]` for `config show`, secrets as `***`.
pub(crate) fn render_dingtalk(config: &DingTalkConfig) -> RawDingTalk {
    let hidden = |s: &Option<SecretString>| s.as_ref().map(|_| "***".to_owned());
    RawDingTalk {
        client_id: Some(config.client_id.clone()),
        client_secret: Some("***".to_owned()),
        card_template_id: Some(config.card_template_id.clone()),
        answer_template_id: Some(config.answer_template_id.clone()),
        mode: Some(config.mode.as_str().to_owned()),
        api_base: Some(config.api_base.clone()),
        gateway_base: Some(config.gateway_base.clone()),
        callback_route_key: Some(config.callback_route_key.clone()),
        token: hidden(&config.token),
        encoding_aes_key: hidden(&config.encoding_aes_key),
        admins: (!config.admins.is_empty()).then(|| config.admins.clone()),
        corp_id: config.corp_id.clone(),
    }
}
