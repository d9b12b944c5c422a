//! What a surface may ask of a session. Surfaces submit commands and consume events; nothing else
//! crosses into the engine.
//!
//! Every command names the actor it acts for: the engine decides whether that person may do it
//! (resolve a prompt, change the mode), never the surface.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Surface;
use crate::common::{Actor, PermissionMode};
use crate::ids::InboxItemId;
use crate::inbox::Resolution;

/// A request to a session. The `type` tag names the command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Command {
    /// A message from a person. Starts a turn, or steers the running one at its next step.
    UserMessage {
        /// Who wrote it.
        author: Actor,
        /// The text.
        text: String,
        /// Files attached to the message.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Attachment>,
    },
    /// Answer a parked prompt. The first answer wins; a later one is told who won.
    ResolveInbox {
        /// The item answered.
        item_id: InboxItemId,
        /// The answer.
        resolution: Resolution,
        /// Who answered; must be allowed to resolve the item.
        actor: Actor,
        /// Where the answer came from.
        via: Surface,
    },
    /// Stop the running turn. Pending prompts of the turn resolve as denied.
    Interrupt {
        /// Who asked.
        actor: Actor,
    },
    /// Change the session's permission mode.
    SetMode {
        /// The new mode.
        mode: PermissionMode,
        /// Who asked.
        actor: Actor,
    },
    /// Change the session's model.
    SwitchModel {
        /// The new model id (`provider:model`).
        model: String,
        /// Who asked.
        actor: Actor,
    },
    /// Change the session's persona: who answers, with which instructions and tools (and its
    /// model, when the persona names one). Refused while a turn runs, and for a persona that is
    /// not enabled.
    SetPersona {
        /// The persona id (`release-manager`).
        persona: String,
        /// Who asked.
        actor: Actor,
    },
    /// Run the last turn again (after an error).
    Retry {
        /// Who asked.
        actor: Actor,
    },
    /// Compact the conversation now: summarize its older part so later turns send less (the
    /// history itself is kept). Runs as a turn of its own; refused while a turn runs.
    Compact {
        /// Who asked.
        actor: Actor,
    },
}

impl Command {
    /// The wire tag, e.g. `"user_message"`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::UserMessage { .. } => "user_message",
            Self::ResolveInbox { .. } => "resolve_inbox",
            Self::Interrupt { .. } => "interrupt",
            Self::SetMode { .. } => "set_mode",
            Self::SwitchModel { .. } => "switch_model",
            Self::SetPersona { .. } => "set_persona",
            Self::Retry { .. } => "retry",
            Self::Compact { .. } => "compact",
        }
    }

    /// The person the command acts for.
    pub fn actor(&self) -> &Actor {
        match self {
            Self::UserMessage { author, .. } => author,
            Self::ResolveInbox { actor, .. }
            | Self::Interrupt { actor }
            | Self::SetMode { actor, .. }
            | Self::SwitchModel { actor, .. }
            | Self::SetPersona { actor, .. }
            | Self::Retry { actor }
            | Self::Compact { actor } => actor,
        }
    }
}

/// A file attached to a user message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attachment {
    /// How the file is passed to the model.
    pub kind: AttachmentKind,
    /// The file name.
    pub name: String,
    /// The MIME type, e.g. `"image/png"`.
    pub mime: String,
    /// For `image` and `pdf`, a base64 data URL (`data:<mime>;base64,…`); for `text`, the body.
    pub data: String,
}

/// The kind of an attachment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AttachmentKind {
    /// An image, sent as an image part.
    Image,
    /// A PDF, sent as a file part.
    Pdf,
    /// A text file, inlined as a text part.
    Text,
    /// An Office document (Word `.docx`, Excel `.xlsx`), inlined as the text workmate extracts
    /// from it.
    Document,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_tagged_and_name_their_actor() {
        let cmd = Command::SetMode {
            mode: PermissionMode::Plan,
            actor: Actor::new("u_1"),
        };
        let json = serde_json::to_value(&cmd).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "set_mode", "mode": "plan", "actor": {"user_id": "u_1"}})
        );
        assert_eq!(json["type"], cmd.name());
        assert_eq!(cmd.actor().user_id.as_str(), "u_1");
    }

    #[test]
    fn user_message_attachments_default_to_none() {
        let cmd: Command = serde_json::from_str(
            r#"{"type":"user_message","author":{"user_id":"u_1"},"text":"hi"}"#,
        )
        .unwrap();
        assert!(
            matches!(cmd, Command::UserMessage { ref attachments, .. } if attachments.is_empty())
        );
        assert!(serde_json::from_str::<Command>(r#"{"type":"reboot"}"#).is_err());
    }
}
