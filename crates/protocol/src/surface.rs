//! [`Surface`]: where a command came from or an event is shown.
//!
//! Invariants: the enum is closed inside the workspace (every `match` on it names each
//! variant, so a new surface cannot be forgotten silently); `as_str` equals the serde form and
//! `FromStr` reads exactly those names back; the sandbox stands in for Slack wherever a surface
//! decides whose cards, accounts and tenants are meant ([`Surface::platform`]).

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a command came from or an event is shown: a chat platform, the API, or the server itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// The HTTP/SSE API.
    Http,
    /// Slack.
    Slack,
    /// Feishu (Lark).
    Feishu,
    /// WeCom (WeChat Work).
    Wecom,
    /// DingTalk.
    Dingtalk,
    /// The local sandbox that stands in for the chat platforms.
    Sandbox,
    /// The desktop companion.
    Companion,
    /// The automation scheduler (scheduled runs, self-wakes).
    Scheduler,
    /// The server itself (durable resume, housekeeping such as closing a deleted session's items).
    System,
}

impl Surface {
    /// Every surface, in declaration order.
    pub const ALL: [Self; 9] = [
        Self::Http,
        Self::Slack,
        Self::Feishu,
        Self::Wecom,
        Self::Dingtalk,
        Self::Sandbox,
        Self::Companion,
        Self::Scheduler,
        Self::System,
    ];

    /// The wire name, e.g. `"slack"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Slack => "slack",
            Self::Feishu => "feishu",
            Self::Wecom => "wecom",
            Self::Dingtalk => "dingtalk",
            Self::Sandbox => "sandbox",
            Self::Companion => "companion",
            Self::Scheduler => "scheduler",
            Self::System => "system",
        }
    }

    /// The name a person reads, e.g. `"WeCom"`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Http => "the API",
            Self::Slack => "Slack",
            Self::Feishu => "Feishu",
            Self::Wecom => "WeCom",
            Self::Dingtalk => "DingTalk",
            Self::Sandbox => "the sandbox",
            Self::Companion => "the desktop companion",
            Self::Scheduler => "the scheduler",
            Self::System => "workmate",
        }
    }

    /// Whether this is a chat thread people write in (a platform, or the sandbox that stands in
    /// for one): where results can be posted and accounts may need a directory link.
    pub fn is_chat(self) -> bool {
        match self {
            Self::Slack | Self::Feishu | Self::Wecom | Self::Dingtalk | Self::Sandbox => true,
            Self::Http | Self::Companion | Self::Scheduler | Self::System => false,
        }
    }

    /// The platform whose cards, accounts and tenants this surface uses: the sandbox's are
    /// Slack's; every other surface is its own.
    pub fn platform(self) -> Self {
        match self {
            Self::Sandbox => Self::Slack,
            Self::Http
            | Self::Slack
            | Self::Feishu
            | Self::Wecom
            | Self::Dingtalk
            | Self::Companion
            | Self::Scheduler
            | Self::System => self,
        }
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no surface's wire name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a surface (expected one of http, slack, feishu, wecom, dingtalk, sandbox, companion, scheduler, system)"
)]
pub struct UnknownSurface(pub String);

impl FromStr for Surface {
    type Err = UnknownSurface;

    /// Reads a wire name back, e.g. `"dingtalk"`; nothing else (no aliases, no other case).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|surface| surface.as_str() == name)
            .ok_or_else(|| UnknownSurface(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wire_name_reads_back_and_equals_the_serde_form() {
        for surface in Surface::ALL {
            assert_eq!(surface.as_str().parse::<Surface>(), Ok(surface));
            assert_eq!(
                serde_json::to_value(surface).unwrap(),
                serde_json::json!(surface.as_str())
            );
        }
        assert!("Slack".parse::<Surface>().is_err());
        assert!("lark".parse::<Surface>().is_err());
    }

    #[test]
    fn only_the_platforms_and_the_sandbox_are_chats() {
        let chats: Vec<Surface> = Surface::ALL.into_iter().filter(|s| s.is_chat()).collect();
        assert_eq!(
            chats,
            [
                Surface::Slack,
                Surface::Feishu,
                Surface::Wecom,
                Surface::Dingtalk,
                Surface::Sandbox
            ]
        );
    }

    #[test]
    fn only_the_sandbox_stands_in_for_another_platform() {
        for surface in Surface::ALL {
            let expected = if surface == Surface::Sandbox {
                Surface::Slack
            } else {
                surface
            };
            assert_eq!(surface.platform(), expected);
            assert_eq!(surface.platform().is_chat(), surface.is_chat());
        }
    }
}
