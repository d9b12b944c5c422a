//! Interactivity bodies: `application/x-www-form-urlencoded` with a single `payload` field that
//! holds the JSON.
//!
//! Invariant: the form layer is undone exactly as a browser form decoder does (percent escapes,
//! `+` as space) and only then is the JSON parsed, so a `+` inside the JSON means a space and a
//! `%2B` means a plus. Only `block_actions` is typed; other types decode to
//! [`Interaction::Other`].

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{DecodeError, form_field, split_tag, variant};

/// Decodes an interactivity request body (`payload=<form-encoded JSON>`).
pub fn decode_interaction(body: &[u8]) -> Result<Interaction, DecodeError> {
    let payload = form_field(body, "payload").ok_or(DecodeError::MissingField("payload"))?;
    serde_json::from_str(&payload).map_err(|source| DecodeError::Json {
        what: "interaction payload",
        source,
    })
}

/// An interaction payload, by its `type`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Interaction {
    /// A button (or other block element) was used.
    BlockActions(Box<BlockActions>),
    /// `view_submission`, `shortcut`, `message_action`, … : acknowledge and ignore for now.
    Other {
        /// The payload's `type`.
        interaction_type: String,
    },
}

impl<'de> Deserialize<'de> for Interaction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (tag, value) = split_tag(deserializer, "interaction payload")?;
        Ok(match tag.as_str() {
            "block_actions" => Self::BlockActions(Box::new(variant(value)?)),
            _ => Self::Other {
                interaction_type: tag,
            },
        })
    }
}

/// `type: "block_actions"`. The deprecated verification `token` is deliberately not decoded:
/// the signature is the authentication.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct BlockActions {
    /// Who clicked.
    pub user: InteractionUser,
    /// Workspace; `null` for some org-wide installs.
    pub team: Option<InteractionTeam>,
    /// The receiving app.
    pub api_app_id: Option<String>,
    /// Opens a modal; valid for about 3 s.
    pub trigger_id: Option<String>,
    /// Where the element lives (a message or a view).
    pub container: Container,
    /// Conversation, when the container is a message.
    pub channel: Option<InteractionChannel>,
    /// The message that holds the element, as it was when clicked.
    pub message: Option<InteractionMessage>,
    /// Reply or replace-original URL: 5 uses within 30 minutes.
    pub response_url: Option<String>,
    /// The element(s) used; normally exactly one.
    #[serde(default)]
    pub actions: Vec<Action>,
    /// Values of input elements in the same surface, as Slack sends them.
    pub state: Option<Value>,
}

impl BlockActions {
    /// Conversation of the clicked message: `channel.id`, else `container.channel_id`.
    pub fn channel_id(&self) -> Option<&str> {
        self.channel
            .as_ref()
            .map(|c| c.id.as_str())
            .or(self.container.channel_id.as_deref())
    }

    /// `ts` of the clicked message (the id `chat.update` needs): `container.message_ts`, else
    /// `message.ts`.
    pub fn message_ts(&self) -> Option<&str> {
        self.container
            .message_ts
            .as_deref()
            .or(self.message.as_ref().map(|m| m.ts.as_str()))
    }

    /// Workspace id: `team.id`, else the clicking user's `team_id`.
    pub fn team_id(&self) -> Option<&str> {
        self.team
            .as_ref()
            .map(|t| t.id.as_str())
            .or(self.user.team_id.as_deref())
    }
}

/// `user` of an interaction.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct InteractionUser {
    /// User id (`U…`); mention as `<@U…>`.
    pub id: String,
    /// Handle.
    pub username: Option<String>,
    /// Display name (legacy).
    pub name: Option<String>,
    /// The user's home workspace.
    pub team_id: Option<String>,
}

/// `team` of an interaction.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct InteractionTeam {
    /// Workspace id (`T…`).
    pub id: String,
    /// Workspace subdomain.
    pub domain: Option<String>,
}

/// `channel` of an interaction.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct InteractionChannel {
    /// Conversation id.
    pub id: String,
    /// Conversation name, when Slack knows it.
    pub name: Option<String>,
}

/// `container`: the surface holding the element.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Container {
    /// `message`, `view`, …
    #[serde(rename = "type")]
    pub container_type: String,
    /// The message's `ts`, for message containers.
    pub message_ts: Option<String>,
    /// The message's conversation, for message containers.
    pub channel_id: Option<String>,
    /// Ephemeral messages cannot be edited with `chat.update`, only through `response_url`.
    #[serde(default)]
    pub is_ephemeral: bool,
}

/// `message`: the clicked message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct InteractionMessage {
    /// Message id within its conversation.
    pub ts: String,
    /// Fallback text.
    #[serde(default)]
    pub text: String,
    /// Thread parent, when the message is a reply.
    pub thread_ts: Option<String>,
    /// The posting bot (normally this app).
    pub bot_id: Option<String>,
    /// `bot_message` for most app posts.
    pub subtype: Option<String>,
    /// Block Kit blocks as posted; kept raw for rebuilding the card.
    #[serde(default)]
    pub blocks: Vec<Value>,
}

/// One entry of `actions`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Action {
    /// The element's `action_id`, as set when the card was built.
    pub action_id: String,
    /// The enclosing block's id.
    pub block_id: Option<String>,
    /// `button`, `static_select`, …
    #[serde(rename = "type")]
    pub action_type: String,
    /// A button's `value` (≤ 2000 chars); absent for elements without one.
    pub value: Option<String>,
    /// When the click happened (Slack `ts` format).
    pub action_ts: Option<String>,
    /// A button's label.
    pub text: Option<TextObject>,
    /// `primary` or `danger`, when set.
    pub style: Option<String>,
}

/// A Block Kit text object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct TextObject {
    /// `plain_text` or `mrkdwn`.
    #[serde(rename = "type")]
    pub text_type: String,
    /// The text.
    pub text: String,
}
