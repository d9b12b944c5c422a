//! `im.message.receive_v1`: who wrote what, where.

use serde::Deserialize;
use serde_json::Value;

/// The three ids Feishu gives a user.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct UserIds {
    /// Per app (`ou_…`).
    #[serde(default)]
    pub open_id: Option<String>,
    /// Per developer across apps (`on_…`).
    #[serde(default)]
    pub union_id: Option<String>,
    /// Per tenant.
    #[serde(default)]
    pub user_id: Option<String>,
}

impl UserIds {
    /// The id workmate names the user by: the `open_id`, else the `union_id`, else `user_id`.
    pub fn best(&self) -> Option<&str> {
        [&self.open_id, &self.union_id, &self.user_id]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .find(|id| !id.is_empty())
    }
}

/// A message event.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct MessageEvent {
    /// Who sent it.
    pub sender: Sender,
    /// The message.
    pub message: MessageId,
}

/// The sender of a message.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Sender {
    /// Their ids.
    pub sender_id: UserIds,
    /// `user` for a person; `app` for a bot.
    #[serde(default)]
    pub sender_type: String,
    /// Their tenant.
    #[serde(default)]
    pub tenant_key: Option<String>,
}

/// The message itself.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct MessageId {
    /// `om_…`.
    pub message_id: String,
    /// The thread's root message, empty when the message starts it.
    #[serde(default)]
    pub root_id: Option<String>,
    /// The chat (`oc_…`).
    pub chat_id: String,
    /// `p2p` or `group`.
    #[serde(default)]
    pub chat_type: String,
    /// `text`, `post`, `image`, …
    #[serde(default)]
    pub message_type: String,
    /// The content, a JSON string.
    #[serde(default)]
    pub content: String,
    /// The people and bots it mentions.
    #[serde(default)]
    pub mentions: Vec<Mention>,
}

impl MessageId {
    /// The thread it belongs to: its root, or itself when it starts one.
    pub fn thread_root(&self) -> &str {
        self.root_id
            .as_deref()
            .filter(|r| !r.is_empty())
            .unwrap_or(&self.message_id)
    }

    /// Whether it was sent in a one-to-one chat with the bot.
    pub fn is_direct(&self) -> bool {
        self.chat_type == "p2p"
    }
}

/// A mention inside a message.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Mention {
    /// The placeholder in the text (`@_user_1`).
    pub key: String,
    /// Whom it mentions.
    #[serde(default)]
    pub id: UserIds,
    /// Their name.
    #[serde(default)]
    pub name: String,
}

/// The text of a message with its mention placeholders resolved: `bot`'s own mention removed,
/// other mentions shown as `@name`. `None` for content that is not text (images, files, …).
pub fn message_text(message: &MessageId, bot: Option<&str>) -> Option<String> {
    let raw = match message.message_type.as_str() {
        "text" => {
            #[derive(Deserialize)]
            struct Text {
                text: String,
            }
            serde_json::from_str::<Text>(&message.content).ok()?.text
        }
        "post" => post_text(&serde_json::from_str(&message.content).ok()?),
        _ => return None,
    };
    let mut text = raw;
    for mention in &message.mentions {
        let is_bot = bot.is_some_and(|b| mention.id.open_id.as_deref() == Some(b));
        let with = if is_bot {
            String::new()
        } else {
            format!("@{}", mention.name)
        };
        text = text.replace(&mention.key, &with);
    }
    Some(text.trim().to_owned())
}

/// The plain text of a rich-text (`post`) message: its title and every text and link run.
fn post_text(content: &Value) -> String {
    // A post is `{title, content: [[runs]]}`, possibly wrapped in a locale (`zh_cn`, `en_us`).
    let post = if content.get("content").is_some() {
        content
    } else {
        content
            .as_object()
            .and_then(|o| o.values().next())
            .unwrap_or(content)
    };
    let mut lines = Vec::new();
    if let Some(title) = post
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        lines.push(title.to_owned());
    }
    for paragraph in post
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut line = String::new();
        for run in paragraph.as_array().into_iter().flatten() {
            match run.get("tag").and_then(Value::as_str) {
                Some("text" | "a" | "code_block") => {
                    line.push_str(run.get("text").and_then(Value::as_str).unwrap_or_default());
                }
                Some("at") => {
                    line.push_str(
                        run.get("user_id")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    );
                }
                _ => {}
            }
        }
        lines.push(line);
    }
    lines.join("\n")
}
