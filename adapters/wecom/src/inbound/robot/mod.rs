//! The smart robot's (智能机器人) decrypted JSON: messages, stream refreshes and events. The long
//! connection's `aibot_msg_callback` / `aibot_event_callback` bodies are the same JSON.
//!
//! Invariants: a message or stream refresh has its `msgid`, its sender and, in a group, its
//! `chatid`, or it is an error; an event decodes whatever its type and contents, an unknown type
//! as [`RobotEventKind::Other`]; an unknown message type decodes as [`RobotContent::Other`].

mod decode;
mod event;

pub use decode::decode_robot;
pub use event::{RobotEvent, RobotEventKind, RobotFeedback};

/// One decoded smart-robot callback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RobotCallback {
    /// Someone wrote to the robot (a DM, or a group message that @-mentions it).
    Message(Box<RobotMessage>),
    /// WeCom asks for the current snapshot of a streamed answer (`msgtype: "stream"`). The
    /// surface answers it from its own state: it is not a delivery.
    StreamRefresh(StreamRefresh),
    /// An event (`msgtype: "event"`).
    Event(Box<RobotEvent>),
}

/// Where a callback happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chat {
    /// A one-to-one chat with the robot.
    Single,
    /// A group chat.
    Group {
        /// The group's `chatid`.
        chatid: String,
    },
}

/// Who sent a callback.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RobotFrom {
    /// The sender's `userid` (empty only on events that have no sender, such as
    /// `disconnected_event`).
    pub userid: String,
    /// The sender's corp, given for people from another corp.
    pub corpid: Option<String>,
}

/// A message to the robot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotMessage {
    /// The message's id: what a redelivery repeats.
    pub msgid: String,
    /// The robot it was sent to.
    pub aibotid: String,
    /// Where it was written.
    pub chat: Chat,
    /// Who wrote it.
    pub from: RobotFrom,
    /// A URL that accepts one proactive reply (short-lived).
    pub response_url: Option<String>,
    /// When it was sent (Unix seconds), when given.
    pub create_time: Option<i64>,
    /// What it says.
    pub content: RobotContent,
    /// The message it quotes, if any.
    pub quote: Option<Quote>,
}

/// A message's content, by `msgtype`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RobotContent {
    /// `text`: in a group it starts with the robot's `@Name`.
    Text(String),
    /// `mixed`: text and images interleaved.
    Mixed(Vec<MixedItem>),
    /// `image`.
    Image(Media),
    /// `voice`, with WeCom's transcription when given.
    Voice(Option<String>),
    /// `file`.
    File(Media),
    /// `video`.
    Video(Media),
    /// Another `msgtype`.
    Other(String),
}

impl RobotContent {
    /// The text a person wrote: the text, a mixed message's text parts (one per line) or a voice
    /// message's transcription. `None` for content without text.
    pub fn text(&self) -> Option<String> {
        match self {
            Self::Text(text) => Some(text.clone()),
            Self::Voice(text) => text.clone(),
            Self::Mixed(items) => {
                let parts: Vec<&str> = items
                    .iter()
                    .filter_map(|item| match item {
                        MixedItem::Text(text) => Some(text.as_str()),
                        MixedItem::Image(_) | MixedItem::Other(_) => None,
                    })
                    .collect();
                (!parts.is_empty()).then(|| parts.join("\n"))
            }
            Self::Image(_) | Self::File(_) | Self::Video(_) | Self::Other(_) => None,
        }
    }
}

/// One part of a `mixed` message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MixedItem {
    /// A run of text.
    Text(String),
    /// An image.
    Image(Media),
    /// Another kind of part.
    Other(String),
}

/// A downloadable attachment: its URL and the per-message AES key it is encrypted with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Media {
    /// Where to download it (short-lived).
    pub url: Option<String>,
    /// The key to decrypt the download with.
    pub aeskey: Option<String>,
}

/// A quoted message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quote {
    /// Its `msgtype`.
    pub msgtype: String,
    /// Its text, when it has any.
    pub text: Option<String>,
}

/// A stream refresh: WeCom polls for the answer streamed under `stream_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRefresh {
    /// The callback's id.
    pub msgid: String,
    /// The robot.
    pub aibotid: String,
    /// Where the answer is shown.
    pub chat: Chat,
    /// Who asked.
    pub from: RobotFrom,
    /// The stream id the robot chose in its first reply.
    pub stream_id: String,
}
