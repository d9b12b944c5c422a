//! Parked prompts: what kind they are, where they show, the questions they ask and how they end.
//!
//! A prompt is parked once per `(session, tool_call_id)` and resolved at most once: the first
//! answerer wins, and the `Resolution` recorded is the one every surface later sees.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{ApprovalChoice, PermissionMode};

/// What a parked inbox item asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InboxItemKind {
    /// A tool call waiting for permission.
    Approval,
    /// A question to the user (`ask_user`).
    Question,
    /// Information only; resolving it just acknowledges it.
    Notification,
    /// A request for access to a folder.
    Directory,
    /// A plan waiting for approval.
    Plan,
    /// A request to install a tool.
    Tool,
}

impl InboxItemKind {
    /// The wire name, e.g. `"approval"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::Question => "question",
            Self::Notification => "notification",
            Self::Directory => "directory",
            Self::Plan => "plan",
            Self::Tool => "tool",
        }
    }
}

/// Where a parked item shows. Visibility changes where the human is reached, never what the agent
/// may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Visibility {
    /// Attended session: shown only in the session's own thread.
    Inline,
    /// Unattended session or headless run: also listed in the cross-session inbox.
    Inbox,
}

impl Visibility {
    /// The wire name, e.g. `"inline"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inline => "inline",
            Self::Inbox => "inbox",
        }
    }
}

/// One selectable answer of a question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// The answer text; choosing the option answers with this label.
    pub label: String,
    /// A longer explanation shown under the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the agent recommends this option.
    #[serde(default)]
    pub recommended: bool,
    /// A preview (for example a snippet of the text the option would produce).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
}

/// One question of a grouped question form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question text.
    pub question: String,
    /// A short chip label; also the key of this answer in a grouped answer.
    pub header: String,
    /// The selectable answers; may be empty for a free-text question.
    pub options: Vec<QuestionOption>,
    /// Whether a free-text answer is accepted.
    pub allow_text: bool,
    /// Whether several options may be chosen.
    pub multi: bool,
}

/// How a parked inbox item was resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Resolution {
    /// A permission prompt was answered.
    Approval {
        /// The choice made.
        choice: ApprovalChoice,
    },
    /// A question was answered.
    Answer {
        /// Free text or the chosen option's label (several labels joined for multi-select); for
        /// a grouped form, a JSON object text mapping each question's header to its answer.
        text: String,
    },
    /// A directory request was answered.
    Directory {
        /// Whether access was granted.
        granted: bool,
        /// The folder granted, which the user may have changed from the one requested.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// Whether the grant allows writing.
        writable: bool,
    },
    /// A plan was approved or rejected.
    Plan {
        /// Whether the plan was approved.
        approved: bool,
        /// The permission mode to implement the plan in (default `interactive`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<PermissionMode>,
        /// The user's feedback, usually given with a rejection.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
    /// The item was closed without an answer (for example "session deleted"); the waiting tool
    /// call is treated as denied.
    Dismissed {
        /// Why the item was closed.
        reason: String,
    },
}

impl Resolution {
    /// The mode an approved plan is implemented in: `auto` when that was chosen, else
    /// `interactive` (any other mode asked for included); `None` for anything but an approved
    /// plan.
    pub fn plan_mode(&self) -> Option<PermissionMode> {
        match self {
            Self::Plan {
                approved: true,
                mode,
                ..
            } => Some(match mode {
                Some(PermissionMode::Auto) => PermissionMode::Auto,
                _ => PermissionMode::Interactive,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolutions_are_tagged() {
        let r = Resolution::Approval {
            choice: ApprovalChoice::AlwaysCommand,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"type": "approval", "choice": "always_command"})
        );
        let plan: Resolution =
            serde_json::from_str(r#"{"type":"plan","approved":false,"feedback":"smaller"}"#)
                .unwrap();
        assert_eq!(
            plan,
            Resolution::Plan {
                approved: false,
                mode: None,
                feedback: Some("smaller".into())
            }
        );
        assert!(serde_json::from_str::<Resolution>(r#"{"type":"maybe"}"#).is_err());
    }

    #[test]
    fn kinds_serialize_as_their_names() {
        for k in [
            InboxItemKind::Approval,
            InboxItemKind::Notification,
            InboxItemKind::Tool,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        for v in [Visibility::Inline, Visibility::Inbox] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
    }
}
