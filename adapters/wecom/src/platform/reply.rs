//! The handle a smart-robot message is answered through, carried opaquely by the chat layer
//! from the delivery to the cards of the turn it starts ([`workmate_adapter::Inbound::reply`]).
//!
//! Invariant: the stream id depends on the message id alone, so a redelivered message is
//! answered with the same stream as the first delivery, on any replica.

use serde::{Deserialize, Serialize};

/// How to answer one message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyHandle {
    /// The stream the passive reply to the message opened (callback mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// The message's `response_url`: one proactive answer (callback mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_url: Option<String>,
    /// The callback frame's `req_id`, which answers it (long-connection mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub req_id: Option<String>,
    /// The message came to the self-built app: answers are app messages to the person.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub app: bool,
    /// The message was written in a group: what the reply shows, the whole group sees.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group: bool,
}

impl ReplyHandle {
    /// The handle of a message received in callback mode.
    pub fn callback(msgid: &str, response_url: Option<&str>) -> Self {
        Self {
            stream: Some(stream_id(msgid)),
            response_url: response_url.map(str::to_owned),
            req_id: None,
            app: false,
            group: false,
        }
    }

    /// The handle of a message received over the long connection in frame `req_id`.
    pub fn socket(msgid: &str, req_id: &str) -> Self {
        Self {
            stream: Some(stream_id(msgid)),
            response_url: None,
            req_id: Some(req_id.to_owned()),
            app: false,
            group: false,
        }
    }

    /// The same handle, for a message written in a group (`in_group`) or a one-to-one chat.
    #[must_use]
    pub fn in_group(mut self, in_group: bool) -> Self {
        self.group = in_group;
        self
    }

    /// The handle of a message to the self-built app.
    pub fn app() -> Self {
        Self {
            app: true,
            ..Self::default()
        }
    }

    /// As the chat layer carries it.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// From what the chat layer carried; `None` for anything else.
    pub fn decode(carried: Option<&str>) -> Option<Self> {
        carried.and_then(|c| serde_json::from_str(c).ok())
    }
}

/// The stream id workmate answers the message `msgid` with: `wm` and 32 hex digits of its
/// SHA-256 (a valid id whatever characters the message id has).
pub fn stream_id(msgid: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(msgid.as_bytes());
    format!("wm{}", hex::encode(&digest[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_round_trips_and_its_stream_depends_on_the_message_alone() {
        let handle = ReplyHandle::callback("MSG1", Some("https://example.test/r"));
        assert_eq!(ReplyHandle::decode(Some(&handle.encode())), Some(handle));
        assert_eq!(stream_id("MSG1"), stream_id("MSG1"));
        assert_ne!(stream_id("MSG1"), stream_id("MSG2"));
        assert_eq!(stream_id("MSG1").len(), 34);
        assert_eq!(ReplyHandle::decode(Some("not json")), None);
        assert_eq!(ReplyHandle::decode(None), None);
    }
}
