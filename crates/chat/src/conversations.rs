//! Which conversation a delivery belongs to, and where its answers go.
//!
//! - In a thread (Slack, a Feishu topic): the thread's session. Its starter owns it; once an
//!   admin made it shared (`/workmate settings conversations shared` typed in it), anyone in
//!   the thread talks to it.
//! - In a direct chat: the person's session there.
//! - In a group of a platform without threads (WeCom, DingTalk): by default each person has
//!   their own conversation with workmate, keyed by group and person (thread id
//!   `@<platform user id>#<epoch>`, see [`personal_thread`]); answers name the person
//!   ([`ChatTarget::person`]); `/workmate new` starts the person's next one. Once an admin made
//!   the group shared, the group has one conversation (thread id empty) that everyone talks to.
//!
//! Invariants: a personal conversation is owned by its person, so the engine's one authority
//! rule (owner or admin) keeps everyone else out of it, approvals included; the epoch of a
//! person's current conversation is the largest among their sessions in that group, so every
//! replica picks the same one without shared state; sharing is recorded on the session
//! ([`workmate_store::SessionRecord::shared`]), never inferred from who writes.

use workmate_adapter::{ChatTarget, Inbound};
use workmate_store::{NewSession, SessionKey, SessionRecord};

use crate::handle::Slot;
use crate::identity::Person;
use crate::{Chat, Result};

/// How a personal conversation's thread id starts.
const PERSONAL: char = '@';
/// What separates the person from the epoch in a personal conversation's thread id.
const EPOCH: char = '#';
/// Sessions of a person in one group read to find their current conversation.
const READ_SESSIONS: u32 = 100;

/// Where a delivery's conversation is.
#[derive(Clone, Debug)]
pub(crate) struct Conversation {
    /// Its session's key.
    pub(crate) key: SessionKey,
    /// Where its cards and notices go.
    pub(crate) target: ChatTarget,
}

/// The thread id of `person`'s conversation number `epoch` in a group without threads.
pub(crate) fn personal_thread(person: &str, epoch: i64) -> String {
    format!("{PERSONAL}{person}{EPOCH}{epoch}")
}

/// The person and epoch a personal conversation's thread id names; `None` for any other.
pub(crate) fn personal_of(thread_id: &str) -> Option<(&str, i64)> {
    let rest = thread_id.strip_prefix(PERSONAL)?;
    let (person, epoch) = rest.rsplit_once(EPOCH)?;
    let epoch = epoch.parse().ok()?;
    (!person.is_empty()).then_some((person, epoch))
}

/// Where a session's cards go in its chat: its thread, or, for a personal conversation in a
/// group without threads, the group, naming its person.
pub(crate) fn target_of(key: &SessionKey) -> ChatTarget {
    let mut target = ChatTarget {
        chat_id: key.chat_id.clone(),
        thread_id: Some(key.thread_id.clone()).filter(|t| !t.is_empty()),
        reply: None,
        person: None,
    };
    if let Some((person, _)) = personal_of(&key.thread_id) {
        target.thread_id = None;
        target.person = Some(person.to_owned());
    }
    target
}

impl Chat {
    /// The conversation `inbound` belongs to (see the module docs).
    pub(crate) async fn conversation_of(
        &self,
        slot: &Slot,
        person: &Person,
        inbound: &Inbound,
    ) -> Result<Conversation> {
        let mut key = SessionKey {
            surface: inbound.surface.platform(),
            chat_id: inbound.chat_id.clone(),
            thread_id: inbound.thread_id.clone().unwrap_or_default(),
        };
        let mut target = ChatTarget {
            chat_id: inbound.chat_id.clone(),
            thread_id: inbound.thread_id.clone(),
            reply: inbound.reply.clone(),
            person: None,
        };
        let threadless_group =
            inbound.thread_id.is_none() && !inbound.direct && !slot.platform.has_threads();
        if threadless_group && !self.group_is_shared(person, &key).await? {
            let epoch = self.current_epoch(person, &key).await?;
            key.thread_id = personal_thread(&person.platform_id, epoch);
            target.person = Some(person.platform_id.clone());
        }
        Ok(Conversation { key, target })
    }

    /// The session at `key`, created (owned by `person`, with the channel's persona) if new;
    /// `true` when this call created it.
    pub(crate) async fn open_conversation(
        &self,
        person: &Person,
        key: &SessionKey,
    ) -> Result<(SessionRecord, bool)> {
        // The channel's persona (and the model it names) for a conversation that starts here.
        let persona = workmate_personas::Personas::new(self.store().clone())
            .for_new_session(&person.tenant, key.surface, &key.chat_id)
            .await?;
        let new = NewSession {
            key: key.clone(),
            owner: person.user.id.clone(),
            title: None,
            model: persona
                .model
                .clone()
                .unwrap_or_else(|| self.hub().config().default_model.clone()),
            persona: persona.id,
            mode: Default::default(),
            unattended: false,
        };
        Ok(self.hub().open_session(&person.tenant, &new).await?)
    }

    /// Starts `person`'s next conversation in the group of `current` (their conversation in a
    /// group without threads): a new session, which their messages go to from now on.
    pub(crate) async fn next_conversation(
        &self,
        person: &Person,
        current: &SessionKey,
    ) -> Result<SessionRecord> {
        let epoch = self.current_epoch(person, current).await?;
        let now = self.store().clock_ms();
        let key = SessionKey {
            thread_id: personal_thread(&person.platform_id, now.max(epoch + 1)),
            ..current.clone()
        };
        Ok(self.open_conversation(person, &key).await?.0)
    }

    /// Whether an admin made the group's one conversation shared.
    async fn group_is_shared(&self, person: &Person, group: &SessionKey) -> Result<bool> {
        let group = SessionKey {
            thread_id: String::new(),
            ..group.clone()
        };
        Ok(self
            .store()
            .sessions()
            .find_by_key(&person.tenant, &group)
            .await?
            .is_some_and(|s| s.shared))
    }

    /// The epoch of `person`'s current conversation in the group: the largest of their
    /// personal sessions there, 0 before the first. A `/workmate new` makes a session with a
    /// larger one at once, so it is current from then on.
    async fn current_epoch(&self, person: &Person, group: &SessionKey) -> Result<i64> {
        let theirs: Vec<SessionRecord> = self
            .store()
            .sessions()
            .list_in_chat(
                &person.tenant,
                group.surface,
                &group.chat_id,
                &person.user.id,
                READ_SESSIONS,
            )
            .await?;
        Ok(theirs
            .iter()
            .filter_map(|s| personal_of(&s.key.thread_id))
            .filter(|(who, _)| *who == person.platform_id)
            .map(|(_, epoch)| epoch)
            .max()
            .unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_personal_thread_names_its_person_and_epoch() {
        assert_eq!(personal_of(&personal_thread("ana", 0)), Some(("ana", 0)));
        assert_eq!(
            personal_of(&personal_thread("li#si", 17)),
            Some(("li#si", 17))
        );
        for other in ["", "1700000000.0001", "@ana", "@#3", "om_root", "@ana#x"] {
            assert_eq!(personal_of(other), None, "{other:?}");
        }
        let key = SessionKey {
            surface: workmate_protocol::Surface::Dingtalk,
            chat_id: "cid1".into(),
            thread_id: personal_thread("ana", 2),
        };
        let target = target_of(&key);
        assert_eq!(
            (target.thread_id, target.person.as_deref()),
            (None, Some("ana"))
        );
    }
}
