//! Messages: send, reply, and the bot's and users' names.

use reqwest::Method;
use serde_json::{Value, json};

use super::{FeishuWeb, WebError, data_str};

/// What a `receive_id` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveIdType {
    /// A chat (`oc_…`).
    ChatId,
    /// A user, per app (`ou_…`): a direct message.
    OpenId,
}

impl ReceiveIdType {
    fn as_str(self) -> &'static str {
        match self {
            Self::ChatId => "chat_id",
            Self::OpenId => "open_id",
        }
    }
}

/// The longest idempotency key Feishu takes.
const UUID_LEN: usize = 50;

/// An idempotency key of at most Feishu's length.
pub(crate) fn idempotency_key(key: &str) -> String {
    key.chars().take(UUID_LEN).collect()
}

impl FeishuWeb {
    /// Sends a message; its `message_id`. Sending again with the same `uuid` within an hour
    /// posts nothing new.
    pub async fn send_message(
        &self,
        id_type: ReceiveIdType,
        receive_id: &str,
        msg_type: &str,
        content: &Value,
        uuid: &str,
    ) -> Result<String, WebError> {
        let path = format!(
            "/open-apis/im/v1/messages?receive_id_type={}",
            id_type.as_str()
        );
        let body = json!({
            "receive_id": receive_id,
            "msg_type": msg_type,
            "content": content.to_string(),
            "uuid": idempotency_key(uuid),
        });
        let answer = self.call(Method::POST, &path, Some(&body)).await?;
        data_str(&answer, &path, "message_id")
    }

    /// Replies to a message, in its thread; its `message_id`.
    pub async fn reply_message(
        &self,
        message_id: &str,
        msg_type: &str,
        content: &Value,
        uuid: &str,
    ) -> Result<String, WebError> {
        let path = format!("/open-apis/im/v1/messages/{message_id}/reply");
        let body = json!({
            "msg_type": msg_type,
            "content": content.to_string(),
            "reply_in_thread": true,
            "uuid": idempotency_key(uuid),
        });
        let answer = self.call(Method::POST, &path, Some(&body)).await?;
        data_str(&answer, &path, "message_id")
    }

    /// The bot's own `open_id`.
    pub async fn bot_open_id(&self) -> Result<String, WebError> {
        let path = "/open-apis/bot/v3/info";
        let answer = self.call(Method::GET, path, None).await?;
        answer
            .pointer("/bot/open_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| WebError::Api {
                path: path.into(),
                code: -1,
                msg: "no bot.open_id in the answer".into(),
            })
    }

    /// A user's name, by `open_id`.
    pub async fn user_name(&self, open_id: &str) -> Result<Option<String>, WebError> {
        Ok(self.user_contact(open_id).await?.0)
    }

    /// A user's name and e-mail address (the work address when set, else the personal one), by
    /// `open_id`. Each is `None` when the app's scopes do not show it.
    pub async fn user_contact(
        &self,
        open_id: &str,
    ) -> Result<(Option<String>, Option<String>), WebError> {
        let path = format!("/open-apis/contact/v3/users/{open_id}?user_id_type=open_id");
        let answer = self.call(Method::GET, &path, None).await?;
        let text = |pointer: &str| {
            answer
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
        };
        let email = text("/data/user/enterprise_email").or_else(|| text("/data/user/email"));
        Ok((text("/data/user/name"), email))
    }
}
