//! `[platforms.*]`: the chat platforms workmate answers on.
//!
//! Each section's keys, defaults and checks belong to its adapter (`workmate_slack::config`,
//! `workmate_feishu::config`, `workmate_wecom::config`, `workmate_dingtalk::config`); this module
//! knows only which sections exist, and turns an adapter's rejection into a [`ConfigError`] that
//! names the section, the key, where the value came from and how to set it.
//!
//! Invariant: a configured platform has every secret it needs to verify inbound requests and to
//! call the platform back, kept as `SecretString`s and rendered as `***`; an absent section means
//! the platform's routes answer 404.

use serde::{Deserialize, Serialize};
use workmate_adapter::config::InvalidKey;
pub use workmate_dingtalk::config::{
    DEFAULT_ANSWER_TEMPLATE_ID, DEFAULT_CALLBACK_ROUTE_KEY, DingTalkConfig, DingTalkMode,
};
pub use workmate_feishu::config::{FeishuConfig, FeishuMode};
pub use workmate_slack::config::{SlackConfig, SlackMode};
pub use workmate_wecom::config::{WeComConfig, WeComMode};

use super::ConfigError;

pub(crate) type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

const SLACK: &str = "platforms.slack";
const FEISHU: &str = "platforms.feishu";
const WECOM: &str = "platforms.wecom";
const DINGTALK: &str = "platforms.dingtalk";

/// `[platforms.*]` as written, each section in its adapter's raw form.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlatforms {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) slack: Option<workmate_slack::config::RawSlack>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) feishu: Option<workmate_feishu::config::RawFeishu>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) wecom: Option<workmate_wecom::config::RawWeCom>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dingtalk: Option<workmate_dingtalk::config::RawDingTalk>,
}

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

/// Validates every configured section with its adapter.
pub(crate) fn validate_platforms(
    raw: &RawPlatforms,
    invalid: Invalid<'_>,
) -> Result<PlatformsConfig, ConfigError> {
    Ok(PlatformsConfig {
        slack: section(SLACK, raw.slack.as_ref(), SlackConfig::validate, invalid)?,
        feishu: section(FEISHU, raw.feishu.as_ref(), FeishuConfig::validate, invalid)?,
        wecom: section(WECOM, raw.wecom.as_ref(), WeComConfig::validate, invalid)?,
        dingtalk: section(
            DINGTALK,
            raw.dingtalk.as_ref(),
            DingTalkConfig::validate,
            invalid,
        )?,
    })
}

/// `[platforms.*]` for `config show`, every secret as `***`.
pub(crate) fn render_platforms(config: &PlatformsConfig) -> RawPlatforms {
    RawPlatforms {
        slack: config.slack.as_ref().map(SlackConfig::redacted),
        feishu: config.feishu.as_ref().map(FeishuConfig::redacted),
        wecom: config.wecom.as_ref().map(WeComConfig::redacted),
        dingtalk: config.dingtalk.as_ref().map(DingTalkConfig::redacted),
    }
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
