//! Who typed a command and what it came to: the [`Caller`] every command is run for, and the
//! [`Outcome`] it answers with.
//!
//! Invariant: plain data that every command module and the session commands share; it depends
//! on no command, so the commands and the session commands depend on it, not on each other.

use workmate_adapter::Inbound;
use workmate_cards::Card;
use workmate_protocol::{SessionId, Surface};
use workmate_store::Role;

use crate::conversations::Conversation;
use crate::identity::Person;
use crate::text::text_card;

/// What a command came to, for the reply and the audit record.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// `ok`, `refused` or `invalid`.
    pub status: &'static str,
    /// The reply as text.
    pub text: String,
    /// The reply as a card, when it has more than text (buttons).
    pub card: Option<Card>,
    /// The session it acted on, if any.
    pub session: Option<SessionId>,
}

impl Outcome {
    pub(crate) fn ok(text: impl Into<String>) -> Self {
        Self {
            status: "ok",
            text: text.into(),
            card: None,
            session: None,
        }
    }

    pub(crate) fn refused(text: impl Into<String>) -> Self {
        Self {
            status: "refused",
            ..Self::ok(text)
        }
    }

    pub(crate) fn in_session(mut self, session: &SessionId) -> Self {
        self.session = Some(session.clone());
        self
    }

    pub(crate) fn with_card(mut self, card: Card) -> Self {
        self.card = Some(card);
        self
    }

    /// The card to show: the command's own, or its text as a card.
    pub(crate) fn card_or_text(&self) -> Card {
        self.card.clone().unwrap_or_else(|| text_card(&self.text))
    }
}

/// Who typed a command, where.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub(crate) person: Person,
    pub(crate) surface: Surface,
    pub(crate) chat_id: String,
    /// The thread it was typed in; `None` for a native slash command.
    pub(crate) thread_id: Option<String>,
    pub(crate) direct: bool,
}

impl Caller {
    pub(crate) fn new(person: &Person, inbound: &Inbound) -> Self {
        Self {
            person: person.clone(),
            surface: inbound.surface,
            chat_id: inbound.chat_id.clone(),
            thread_id: inbound.thread_id.clone(),
            direct: inbound.direct,
        }
    }

    /// The same caller, typing inside `conversation` (in a group without threads, a message's
    /// commands act on the sender's own conversation there, or the group's shared one).
    pub(crate) fn in_conversation(mut self, conversation: &Conversation) -> Self {
        if self.thread_id.is_none() && !self.direct {
            self.thread_id = Some(conversation.key.thread_id.clone());
        }
        self
    }

    /// The surface its sessions are keyed by (the sandbox stands in for Slack).
    pub(crate) fn session_surface(&self) -> Surface {
        self.surface.platform()
    }

    pub(super) fn is_admin(&self) -> bool {
        self.person.role() == Role::Admin
    }
}

/// A role as people read it.
pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Member => "member",
        Role::Approver => "approver",
        Role::Admin => "admin",
    }
}
