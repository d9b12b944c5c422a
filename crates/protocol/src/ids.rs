//! Identifier newtypes.
//!
//! Every id is text. Ids that workmate mints are UUIDv7, whose text form sorts by creation time, so
//! "newest first" is an ordinary string order in every database. Ids minted elsewhere (a model's
//! tool-call id, a tenant slug chosen by an operator) are kept verbatim: the newtypes only stop one
//! kind of id from being passed where another is expected.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A fresh, time-sortable id (UUIDv7).
            pub fn new() -> Self {
                Self(uuid::Uuid::now_v7().to_string())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Consumes the id, returning its text.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

text_id!(
    /// A tenant: one company (or one isolated part of it). Every stored row carries one.
    TenantId
);
text_id!(
    /// A person known to a tenant, whatever chat platform they write from.
    UserId
);
text_id!(
    /// One conversation: a chat thread, a DM, a companion window or an automation run.
    SessionId
);
text_id!(
    /// One turn of a session: from a user message to its terminal event.
    TurnId
);
text_id!(
    /// One tool call. Minted by the model provider, so its text is kept exactly as received.
    ToolCallId
);
text_id!(
    /// One parked prompt in the inbox.
    InboxItemId
);

impl InboxItemId {
    /// The token `[wm:<id>]` a chat reply quotes to answer this item (for example
    /// "approve [wm:01a22c56]").
    pub fn reply_token(&self) -> String {
        format!("[wm:{}]", self.0)
    }
}
text_id!(
    /// One automation (a scheduled task).
    AutomationId
);
text_id!(
    /// One run of an automation.
    RunId
);
text_id!(
    /// One self-wake: a session's request to be resumed later.
    WakeId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_sort_by_creation() {
        let ids: Vec<SessionId> = (0..64).map(|_| SessionId::new()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = ToolCallId::from("call_abc");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"call_abc\"");
        let back: ToolCallId = serde_json::from_str("\"call_abc\"").unwrap();
        assert_eq!(back, id);
    }
}
