//! `send_message(target, text)`: posts to another chat or thread of the tenant's own platform
//! (Slack, Feishu, WeCom or DingTalk). An external tool with a target argument, so it asks for
//! approval unless a standing rule names that exact target ("the digest automation may post to
//! `slack:C0SALES`").
//!
//! Invariants: a target is `<platform>:<chat id>[:<thread id>]`, and only the tenant's own
//! platform is reachable (a tenant is one platform installation: it never posts into another's
//! chats); the text is posted as written, with a last line naming who it was sent for; a post the
//! platform refused is an error the model sees, never reported as sent.

use std::sync::{Arc, Weak};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use workmate_adapter::{CardId, ChatPlatform, ChatTarget, Posting, with_retry};
use workmate_protocol::{Surface, TenantId, ToolSpec};
use workmate_tools::{
    RiskLevel, Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolScope, ToolSource,
    ToolsFuture,
};

use crate::Chat;
use crate::handle::Inner;
use crate::text::text_card;

/// The tool's name.
pub const SEND_MESSAGE: &str = "send_message";
/// The longest text one message carries.
const MAX_TEXT_CHARS: usize = 8_000;

const DESCRIPTION: &str = "Post a message to another chat or thread of this workspace. `target` \
is `<platform>:<chat id>` (e.g. `slack:C0123456789`, `feishu:oc_…`; on Slack also a channel's \
name, `slack:#sales`) or, for a thread, `<platform>:<chat id>:<thread id>`. Markdown is rendered \
as the platform's card. Asks for approval unless a standing rule allows that exact target.";

/// Arguments of `send_message`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendMessageArgs {
    /// Where: `<platform>:<chat id>[:<thread id>]`, e.g. `slack:C0123456789`.
    target: String,
    /// What to post (markdown).
    text: String,
}

/// A parsed target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageTarget {
    /// The platform.
    pub surface: Surface,
    /// The chat.
    pub chat_id: String,
    /// The thread, if any.
    pub thread_id: Option<String>,
}

impl MessageTarget {
    /// Reads `<platform>:<chat id>[:<thread id>]`, where `<platform>` is one of `platforms`'
    /// target names and the chat id has that platform's shape.
    pub fn parse(target: &str, platforms: &[&ChatPlatform]) -> Result<Self, String> {
        let mut parts = target.trim().splitn(3, ':');
        let name = parts.next().unwrap_or_default();
        let Some(platform) = platforms.iter().find(|p| p.is_named(name)) else {
            let names: Vec<String> = platforms
                .iter()
                .map(|p| format!("{}:", p.target_names.first().copied().unwrap_or_default()))
                .collect();
            return Err(match names.as_slice() {
                [] => "no chat platform is configured on this workmate".to_owned(),
                [one] => format!("target {target:?} must start with {one}"),
                [rest @ .., last] => {
                    format!(
                        "target {target:?} must start with {} or {last}",
                        rest.join(", ")
                    )
                }
            });
        };
        let chat_id = parts.next().unwrap_or_default().trim();
        if !(platform.chat_id)(chat_id) {
            return Err(format!(
                "target {target:?} names no {} chat: write {name}:<chat id>[:<thread id>]",
                platform.label
            ));
        }
        let thread_id = parts.next().map(str::trim).filter(|t| !t.is_empty());
        Ok(Self {
            surface: platform.surface,
            chat_id: chat_id.to_owned(),
            thread_id: thread_id.map(str::to_owned),
        })
    }
}

/// The metadata of `send_message`: external, asks, bound to its `target`.
pub fn send_message_metadata() -> ToolMetadata {
    ToolMetadata {
        risk_level: RiskLevel::High,
        requires_approval: true,
        category: "messaging".to_owned(),
        target_arg: Some("target".to_owned()),
        idempotent: false,
    }
}

/// The platform a tenant is an installation of (`slack-T1` is Slack's), if any.
fn platform_of(tenant: &TenantId) -> Option<Surface> {
    let (platform, _) = tenant.as_str().split_once('-')?;
    platform
        .parse::<Surface>()
        .ok()
        .filter(|s| s.is_chat() && s.platform() == *s)
}

/// The tool, bound to the chat layer.
#[derive(Debug)]
pub(crate) struct SendMessage {
    chat: Weak<Inner>,
}

impl Tool for SendMessage {
    fn spec(&self) -> ToolSpec {
        workmate_tools::args::spec::<SendMessageArgs>(SEND_MESSAGE, DESCRIPTION)
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        Some(send_message_metadata())
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = workmate_tools::args::parse::<SendMessageArgs>(SEND_MESSAGE, arguments)?;
            let chat = self
                .chat
                .upgrade()
                .map(|inner| Chat { inner })
                .ok_or_else(|| ToolError::new("workmate is shutting down; try again"))?;
            let target =
                MessageTarget::parse(&args.target, &chat.described()).map_err(ToolError::new)?;
            if platform_of(&ctx.tenant_id) != Some(target.surface) {
                return Err(ToolError::new(format!(
                    "this workspace cannot post to {}: send_message reaches only the chats of \
                     the platform this workspace is on",
                    target.surface.as_str()
                )));
            }
            let text = args.text.trim();
            if text.is_empty() {
                return Err(ToolError::new("send_message needs a non-empty text"));
            }
            if text.chars().count() > MAX_TEXT_CHARS {
                return Err(ToolError::new(format!(
                    "the text is longer than {MAX_TEXT_CHARS} characters: shorten it or split it \
                     into several messages"
                )));
            }
            let slot = chat.slot(target.surface).map_err(|_| {
                ToolError::new(format!(
                    "{} is not configured on this workmate",
                    target.surface.as_str()
                ))
            })?;
            // Whom it was sent for, by the name people know them by.
            let sender = chat
                .store()
                .tenants()
                .get_user(&ctx.tenant_id, &ctx.user_id)
                .await
                .ok()
                .flatten()
                .map(|user| crate::identity::shown_name(&user).to_owned())
                .unwrap_or_else(|| ctx.user_id.to_string());
            let card = text_card(&format!("{text}\n\n_Sent by workmate for {sender}_"));
            let rendered = slot.platform.render(&card);
            let to = ChatTarget {
                chat_id: target.chat_id.clone(),
                thread_id: target.thread_id.clone(),
                reply: None,
                person: None,
            };
            // One key for every retry of this send, so a retry of a post that did arrive makes
            // no second message where the platform dedupes posts.
            let sent_at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let posting = Posting::first(
                CardId {
                    tenant: ctx.tenant_id.clone(),
                    session: ctx.session_id.clone(),
                    card_key: format!("send_message:{sent_at}"),
                }
                .post_key(),
            );
            let posted = with_retry(&slot.retry, || slot.platform.post(&to, &rendered, &posting))
                .await
                .map_err(|e| {
                    ToolError::new(format!(
                        "{} did not take the message: {e}",
                        slot.platform.describe().label
                    ))
                })?;
            Ok(json!({
                "sent": true,
                "target": args.target.trim(),
                "message_id": posted.message_id,
            }))
        })
    }
}

/// Offers `send_message` to turns of tenants whose platform is registered.
#[derive(Debug)]
pub(crate) struct Messaging {
    tool: Arc<SendMessage>,
}

impl Messaging {
    pub(crate) fn new(chat: &Arc<Inner>) -> Self {
        Self {
            tool: Arc::new(SendMessage {
                chat: Arc::downgrade(chat),
            }),
        }
    }
}

impl ToolSource for Messaging {
    fn tools<'a>(&'a self, scope: ToolScope<'a>) -> ToolsFuture<'a> {
        Box::pin(async move {
            let registered = self.tool.chat.upgrade().is_some_and(|inner| {
                platform_of(scope.tenant_id).is_some_and(|p| Chat { inner }.slot(p).is_ok())
            });
            if registered {
                vec![Arc::clone(&self.tool) as Arc<dyn Tool>]
            } else {
                Vec::new()
            }
        })
    }

    fn metadata(&self, name: &str) -> Option<ToolMetadata> {
        (name == SEND_MESSAGE).then(send_message_metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLACK: ChatPlatform = ChatPlatform {
        surface: Surface::Slack,
        label: "Slack",
        target_names: &["slack"],
        chat_id: workmate_adapter::plain_chat_id,
        dedupe_window: std::time::Duration::from_secs(60),
    };
    const FEISHU: ChatPlatform = ChatPlatform {
        surface: Surface::Feishu,
        label: "Feishu",
        target_names: &["feishu", "lark"],
        chat_id: workmate_adapter::plain_chat_id,
        dedupe_window: std::time::Duration::from_secs(60),
    };
    const DINGTALK: ChatPlatform = ChatPlatform {
        surface: Surface::Dingtalk,
        label: "DingTalk",
        target_names: &["dingtalk"],
        chat_id: workmate_adapter::plain_chat_id,
        dedupe_window: std::time::Duration::from_secs(60),
    };

    fn parse(target: &str) -> Result<MessageTarget, String> {
        MessageTarget::parse(target, &[&SLACK, &FEISHU, &DINGTALK])
    }

    #[test]
    fn targets_name_a_platform_a_chat_and_maybe_a_thread() {
        let t = parse("slack:C0SALES").unwrap();
        assert_eq!(
            (t.surface, t.chat_id.as_str(), t.thread_id),
            (Surface::Slack, "C0SALES", None)
        );
        let t = parse(" slack:C01:1712345678.000100 ").unwrap();
        assert_eq!(t.thread_id.as_deref(), Some("1712345678.000100"));
        let t = parse("slack:#sales").unwrap();
        assert_eq!(
            t.chat_id, "#sales",
            "Slack posts to a channel by its name too"
        );
        let t = parse("dingtalk:cidAbC+/x==").unwrap();
        assert_eq!(t.chat_id, "cidAbC+/x==");
        assert_eq!(parse("Lark:oc_1").unwrap().surface, Surface::Feishu);
        for bad in [
            "C01",
            "teams:C01",
            "slack:",
            "slack: :x",
            "slack:C 1",
            "wecom:C1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse("teams:C01").unwrap_err(),
            "target \"teams:C01\" must start with slack:, feishu: or dingtalk:"
        );
    }

    #[test]
    fn a_tenant_posts_only_on_its_own_platform() {
        assert_eq!(
            platform_of(&TenantId::from("slack-T1")),
            Some(Surface::Slack)
        );
        assert_eq!(
            platform_of(&TenantId::from("feishu-ou1")),
            Some(Surface::Feishu)
        );
        assert_eq!(platform_of(&TenantId::from("default")), None);
    }
}
