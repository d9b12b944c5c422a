//! `/workmate new` and `/workmate settings conversations shared|personal`: who talks to which
//! conversation in a group or thread (see [`crate::conversations`]).
//!
//! Invariants: only a tenant admin changes who talks to a conversation, through the engine
//! ([`workmate_engine::SessionHub::share_session`], audited `conversation_shared`); sharing
//! changes who may send messages, never who may answer prompts; a direct chat is its person's
//! alone and cannot be shared.

use workmate_store::{Role, SessionKey};

use super::{Caller, Outcome, role_name};
use crate::conversations::personal_of;
use crate::{Chat, Result};

impl Chat {
    /// Starts the caller's next conversation in a group without threads.
    pub(super) async fn new_conversation(&self, caller: &Caller) -> Result<Outcome> {
        let Some(key) = typed_in(caller) else {
            return Ok(Outcome::refused(
                "Type `/workmate new` in the group, after mentioning workmate.",
            ));
        };
        if personal_of(&key.thread_id).is_none() {
            let why = if key.thread_id.is_empty() {
                "This group shares one conversation (an admin chose it), so there is no \
                 conversation of your own to start afresh here."
            } else {
                "A thread is its own conversation: start a new thread to start afresh."
            };
            return Ok(Outcome::refused(why));
        }
        let session = self.next_conversation(&caller.person, &key).await?;
        Ok(Outcome::ok(
            "Started a fresh conversation: your next message here begins it (the earlier one \
             stays in its history).",
        )
        .in_session(&session.id))
    }

    /// Shares the conversation of the group or thread the caller typed in, or gives each
    /// person their own again.
    pub(super) async fn share_here(&self, caller: &Caller, shared: bool) -> Result<Outcome> {
        if caller.person.role() != Role::Admin {
            return Ok(Outcome::refused(format!(
                "Only admins decide who talks to workmate's conversations here; you are {}.",
                role_name(caller.person.role())
            )));
        }
        if caller.direct {
            return Ok(Outcome::refused(
                "A direct chat is its person's alone; share a group's or a thread's conversation \
                 instead.",
            ));
        }
        let Some(mut key) = typed_in(caller) else {
            return Ok(Outcome::refused(
                "Type it in the group or thread it is for, after mentioning workmate \
                 (`@workmate /workmate settings conversations shared`).",
            ));
        };
        let group = personal_of(&key.thread_id).is_some() || key.thread_id.is_empty();
        if group {
            // A group without threads: its one shared conversation has no thread.
            key.thread_id.clear();
        }
        let sessions = self.store().sessions();
        let existing = sessions.find_by_key(&caller.person.tenant, &key).await?;
        let session = match (existing, shared) {
            (Some(session), _) => session,
            (None, true) => self.open_conversation(&caller.person, &key).await?.0,
            (None, false) => {
                return Ok(Outcome::ok(
                    "Each person already has their own conversation with workmate here.",
                ));
            }
        };
        match self
            .hub()
            .share_session(
                &caller.person.tenant,
                &session.id,
                shared,
                &caller.person.actor(),
            )
            .await
        {
            Ok(()) => {}
            Err(workmate_engine::Error::Forbidden(why)) => {
                return Ok(Outcome::refused(format!("Not changed: {why}.")));
            }
            Err(e) => return Err(e.into()),
        }
        let text = match (shared, group) {
            (true, true) => {
                "Everyone in this group now talks to one shared conversation with workmate. \
                 Approvals stay with the person who asked and the approvers."
            }
            (true, false) => {
                "Everyone in this thread may now talk to its conversation with workmate. \
                 Approvals stay with the person who asked and the approvers."
            }
            (false, true) => {
                "Each person in this group now has their own conversation with workmate again."
            }
            (false, false) => "This thread's conversation is its starter's own again.",
        };
        Ok(Outcome::ok(text).in_session(&session.id))
    }
}

/// The conversation the caller typed in: the key of its thread, its person's own conversation,
/// or its group's; `None` for a native slash command in a channel.
fn typed_in(caller: &Caller) -> Option<SessionKey> {
    let thread = caller.thread_id.clone()?;
    Some(SessionKey {
        surface: caller.session_surface(),
        chat_id: caller.chat_id.clone(),
        thread_id: thread,
    })
}
