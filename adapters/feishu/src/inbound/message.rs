//! `im.message.receive_v1`: who wrote what, where.
//!
//! The fields borrow from the plaintext they were read from; only a string Feishu escaped (a
//! message's `content`, usually) is copied.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

/// The three ids Feishu gives a user.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct UserIds<'a> {
    /// Per app (`ou_…`).
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub open_id: Option<Cow<'a, str>>,
    /// Per developer across apps (`on_…`).
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub union_id: Option<Cow<'a, str>>,
    /// Per tenant.
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub user_id: Option<Cow<'a, str>>,
}

impl UserIds<'_> {
    /// The id workmate names the user by: the `open_id`, else the `union_id`, else `user_id`.
    pub fn best(&self) -> Option<&str> {
        [&self.open_id, &self.union_id, &self.user_id]
            .into_iter()
            .flatten()
            .map(|id| &**id)
            .find(|id| !id.is_empty())
    }
}

/// A message event.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct MessageEvent<'a> {
    /// Who sent it.
    #[serde(borrow)]
    pub sender: Sender<'a>,
    /// The message.
    #[serde(borrow)]
    pub message: MessageId<'a>,
}

/// The sender of a message.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Sender<'a> {
    /// Their ids.
    #[serde(borrow)]
    pub sender_id: UserIds<'a>,
    /// `user` for a person; `app` for a bot.
    #[serde(default, borrow)]
    pub sender_type: Cow<'a, str>,
    /// Their tenant.
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub tenant_key: Option<Cow<'a, str>>,
}

/// The message itself.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct MessageId<'a> {
    /// `om_…`.
    #[serde(borrow)]
    pub message_id: Cow<'a, str>,
    /// The thread's root message, empty when the message starts it.
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub root_id: Option<Cow<'a, str>>,
    /// The chat (`oc_…`).
    #[serde(borrow)]
    pub chat_id: Cow<'a, str>,
    /// `p2p` or `group`.
    #[serde(default, borrow)]
    pub chat_type: Cow<'a, str>,
    /// `text`, `post`, `image`, …
    #[serde(default, borrow)]
    pub message_type: Cow<'a, str>,
    /// The content, a JSON string.
    #[serde(default, borrow)]
    pub content: Cow<'a, str>,
    /// The people and bots it mentions.
    #[serde(default, borrow)]
    pub mentions: Vec<Mention<'a>>,
}

impl MessageId<'_> {
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
pub struct Mention<'a> {
    /// The placeholder in the text (`@_user_1`).
    #[serde(borrow)]
    pub key: Cow<'a, str>,
    /// Whom it mentions.
    #[serde(default, borrow)]
    pub id: UserIds<'a>,
    /// Their name.
    #[serde(default, borrow)]
    pub name: Cow<'a, str>,
}

/// The text of a message with its mention placeholders resolved: `bot`'s own mention removed,
/// other mentions shown as `@name`. `None` for content that is not text (images, files, …).
pub fn message_text(message: &MessageId<'_>, bot: Option<&str>) -> Option<String> {
    let raw = match &*message.message_type {
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
        text = text.replace(&*mention.key, &with);
    }
    Some(text.trim().to_owned())
}

/// The files of a message: a `file`, `image`, `media` or `audio` message's one, a rich-text
/// post's images. Each handle is `<message id>|<key>|<file or image>`, what the message
/// resource API takes.
pub fn message_files(message: &MessageId<'_>) -> Vec<workmate_adapter::InboundFile> {
    use workmate_adapter::InboundFile;
    let Ok(content) = serde_json::from_str::<Value>(&message.content) else {
        return Vec::new();
    };
    let text = |key: &str| content.get(key).and_then(Value::as_str).unwrap_or_default();
    let handle = |key: &str, kind: &str| format!("{}|{key}|{kind}", message.message_id);
    let named = |name: &str, fallback: &str, mime: Option<&str>, handle: String| InboundFile {
        mime: mime.map(str::to_owned),
        ..InboundFile::new(if name.is_empty() { fallback } else { name }, handle)
    };
    match &*message.message_type {
        "file" => vec![named(
            text("file_name"),
            "file",
            None,
            handle(text("file_key"), "file"),
        )],
        "image" => vec![named(
            "",
            "image",
            Some("image/*"),
            handle(text("image_key"), "image"),
        )],
        "media" => vec![named(
            text("file_name"),
            "video.mp4",
            Some("video/mp4"),
            handle(text("file_key"), "file"),
        )],
        "audio" => vec![named(
            "",
            "voice message",
            Some("audio/opus"),
            handle(text("file_key"), "file"),
        )],
        "post" => post_images(&content)
            .into_iter()
            .enumerate()
            .map(|(n, key)| {
                named(
                    "",
                    &format!("image {}", n + 1),
                    Some("image/*"),
                    handle(&key, "image"),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A post's `{title, content: [[runs]]}`, unwrapped from its locale (`zh_cn`, `en_us`) when it
/// has one.
fn post_body(content: &Value) -> &Value {
    if content.get("content").is_some() {
        return content;
    }
    content
        .as_object()
        .and_then(|o| o.values().next())
        .unwrap_or(content)
}

/// The image keys of a rich-text post, in order.
fn post_images(content: &Value) -> Vec<String> {
    let post = post_body(content);
    post.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|paragraph| paragraph.as_array().into_iter().flatten())
        .filter(|run| run.get("tag").and_then(Value::as_str) == Some("img"))
        .filter_map(|run| run.get("image_key").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The plain text of a rich-text (`post`) message: its title and every text and link run.
fn post_text(content: &Value) -> String {
    let post = post_body(content);
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
