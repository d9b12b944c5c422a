//! Robot messages: text and markdown notices into a group (`/v1.0/robot/groupMessages/send`) or
//! to people one-to-one (`/v1.0/robot/oToMessages/batchSend`).
//!
//! Invariant: `msgParam` is a JSON string within DingTalk's 15,000 bytes: a longer text is cut
//! at a character boundary and ends with `…`, so a long notice still arrives.

use reqwest::Method;
use serde_json::json;

use super::{DingTalkWeb, WebError};

/// Group messages from the robot.
pub const GROUP_SEND_PATH: &str = "/v1.0/robot/groupMessages/send";
/// One-to-one messages from the robot.
pub const BATCH_SEND_PATH: &str = "/v1.0/robot/oToMessages/batchSend";
/// The most text one message carries, in bytes: inside the 15,000 bytes of `msgParam` with room
/// for JSON escaping and the title.
pub const MAX_TEXT_BYTES: usize = 12_000;

/// What the robot sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKey<'a> {
    /// `sampleText`: plain text.
    Text(&'a str),
    /// `sampleMarkdown`: markdown with the title shown in the chat list.
    Markdown {
        /// The title.
        title: &'a str,
        /// The markdown.
        text: &'a str,
    },
}

/// Where the robot sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recipient<'a> {
    /// A group by its open conversation id (`cid…`).
    Group(&'a str),
    /// One person, by user id, in their one-to-one chat with the robot.
    User(&'a str),
}

impl MsgKey<'_> {
    fn key(&self) -> &'static str {
        match self {
            Self::Text(_) => "sampleText",
            Self::Markdown { .. } => "sampleMarkdown",
        }
    }

    /// `msgParam`: the message as a JSON string.
    fn param(&self) -> String {
        match self {
            Self::Text(text) => json!({ "content": cut(text) }).to_string(),
            Self::Markdown { title, text } => {
                json!({ "title": title, "text": cut(text) }).to_string()
            }
        }
    }
}

impl DingTalkWeb {
    /// Sends a message from the robot; DingTalk's `processQueryKey` of it.
    pub async fn send_robot(
        &self,
        to: Recipient<'_>,
        message: MsgKey<'_>,
    ) -> Result<String, WebError> {
        let (path, body) = match to {
            Recipient::Group(conversation) => (
                GROUP_SEND_PATH,
                json!({
                    "robotCode": self.client_id,
                    "openConversationId": conversation,
                    "msgKey": message.key(),
                    "msgParam": message.param(),
                }),
            ),
            Recipient::User(user) => (
                BATCH_SEND_PATH,
                json!({
                    "robotCode": self.client_id,
                    "userIds": [user],
                    "msgKey": message.key(),
                    "msgParam": message.param(),
                }),
            ),
        };
        let answer = self.call(Method::POST, path, &body).await?;
        if let Some(invalid) = answer
            .get("invalidStaffIdList")
            .and_then(serde_json::Value::as_array)
            .filter(|list| !list.is_empty())
        {
            return Err(WebError::Api {
                path: path.to_owned(),
                status: 200,
                code: "invalidStaffIdList".into(),
                message: format!("DingTalk does not know the user {invalid:?}"),
            });
        }
        Ok(answer
            .get("processQueryKey")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned())
    }
}

/// Where a message's file is exchanged for a temporary download link.
pub const FILE_DOWNLOAD_PATH: &str = "/v1.0/robot/messageFiles/download";

impl DingTalkWeb {
    /// Fetches a file a person sent the robot: its `downloadCode` exchanged for a temporary
    /// link, then that link fetched (at most `max_bytes`).
    pub async fn message_file(
        &self,
        download_code: &str,
        max_bytes: u64,
        what: &str,
    ) -> Result<workmate_adapter::Downloaded, workmate_adapter::AdapterError> {
        use workmate_adapter::AdapterError;
        if download_code.is_empty() {
            return Err(AdapterError::Rejected(format!(
                "DingTalk gave no download code for {what}"
            )));
        }
        let body = json!({ "downloadCode": download_code, "robotCode": self.client_id });
        let answer = self.call(Method::POST, FILE_DOWNLOAD_PATH, &body).await?;
        let url = answer
            .get("downloadUrl")
            .and_then(serde_json::Value::as_str)
            .filter(|u| !u.is_empty())
            .ok_or_else(|| {
                AdapterError::Rejected(format!("DingTalk gave no download link for {what}"))
            })?;
        workmate_adapter::capped_fetch(
            &self.links,
            url,
            max_bytes,
            what,
            std::time::Duration::from_secs(1),
        )
        .await
    }
}

/// `text` within [`MAX_TEXT_BYTES`].
fn cut(text: &str) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_TEXT_BYTES - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_TEXT_BYTES);
        let cut = cut(&long);
        assert!(cut.len() <= MAX_TEXT_BYTES && cut.ends_with('…'));
        assert_eq!(super::cut("short"), "short");
    }
}
