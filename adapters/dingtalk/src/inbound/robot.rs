//! The robot message callback.

use serde::Deserialize;
use serde_json::Value;

use super::DecodeError;

/// A message to the robot: a direct message, or a group message that @-mentions it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RobotMessage {
    /// What DingTalk repeats on a redelivery.
    pub msg_id: String,
    /// `text`, `richText`, `picture`, `audio`, `file`, …
    #[serde(default)]
    pub msgtype: String,
    /// The conversation (`cid…` for groups).
    pub conversation_id: String,
    /// `"1"`: one-to-one with the robot; `"2"`: a group.
    #[serde(default)]
    pub conversation_type: String,
    /// The group's name.
    #[serde(default)]
    pub conversation_title: Option<String>,
    /// The robot's organisation.
    #[serde(default)]
    pub chatbot_corp_id: Option<String>,
    /// The sender's organisation.
    #[serde(default)]
    pub sender_corp_id: Option<String>,
    /// The sender's user id in the organisation: the id workmate knows them by.
    #[serde(default)]
    pub sender_staff_id: Option<String>,
    /// The sender's encrypted id (the fallback for people outside the organisation).
    #[serde(default)]
    pub sender_id: Option<String>,
    /// The sender's display name.
    #[serde(default)]
    pub sender_nick: Option<String>,
    /// Whether the robot was @-mentioned.
    #[serde(default)]
    pub is_in_at_list: bool,
    /// The robot (its AppKey).
    #[serde(default)]
    pub robot_code: Option<String>,
    /// Where a plain reply to this message may be posted, until it expires.
    #[serde(default)]
    pub session_webhook: Option<String>,
    /// When `session_webhook` expires (Unix ms).
    #[serde(default)]
    pub session_webhook_expired_time: Option<i64>,
    /// When it was sent (Unix ms).
    #[serde(default)]
    pub create_at: Option<i64>,
    #[serde(default)]
    text: Option<Text>,
    /// `richText` messages, and some HTTP samples, carry their body here.
    #[serde(default)]
    content: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
struct Text {
    #[serde(default)]
    content: String,
}

impl RobotMessage {
    /// Whether it came in a one-to-one chat with the robot.
    pub fn is_direct(&self) -> bool {
        self.conversation_type == "1"
    }

    /// What the person wrote, as plain text: a text message's content, or the text parts of a
    /// rich-text one (one per line). `None` for messages without text (pictures, files, voice).
    pub fn text(&self) -> Option<String> {
        if let Some(text) = &self.text {
            return Some(text.content.clone());
        }
        match &self.content {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Object(body)) => {
                if let Some(Value::String(text)) = body.get("content") {
                    return Some(text.clone());
                }
                // A voice message's transcription.
                if let Some(Value::String(text)) = body.get("recognition") {
                    return Some(text.clone());
                }
                let parts: Vec<&str> = body
                    .get("richText")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect();
                (!parts.is_empty()).then(|| parts.join("\n"))
            }
            _ => None,
        }
    }
}

impl RobotMessage {
    /// The files of a message, each handle its `downloadCode`: a picture, a file, a video, or a
    /// rich-text message's pictures.
    pub fn files(&self) -> Vec<workmate_adapter::InboundFile> {
        use workmate_adapter::InboundFile;
        let Some(Value::Object(body)) = &self.content else {
            return Vec::new();
        };
        let text = |part: &serde_json::Map<String, Value>, key: &str| {
            part.get(key)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let code = |part: &serde_json::Map<String, Value>| {
            text(part, "downloadCode")
                .or_else(|| text(part, "pictureDownloadCode"))
                .unwrap_or_default()
        };
        let file = |name: String, mime: Option<&str>, handle: String| InboundFile {
            mime: mime.map(str::to_owned),
            ..InboundFile::new(name, handle)
        };
        match self.msgtype.as_str() {
            "picture" => vec![file("image".into(), Some("image/*"), code(body))],
            "file" => vec![file(
                text(body, "fileName").unwrap_or_else(|| "file".into()),
                None,
                code(body),
            )],
            "video" => vec![file(
                format!(
                    "video.{}",
                    text(body, "videoType").unwrap_or_else(|| "mp4".into())
                ),
                Some("video/mp4"),
                code(body),
            )],
            "richText" => body
                .get("richText")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .filter(|part| text(part, "type").as_deref() == Some("picture"))
                .enumerate()
                .map(|(n, part)| file(format!("image {}", n + 1), Some("image/*"), code(part)))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Decodes a robot message callback.
pub fn decode_robot(body: &str) -> Result<RobotMessage, DecodeError> {
    serde_json::from_str(body).map_err(|e| DecodeError(e.to_string()))
}
