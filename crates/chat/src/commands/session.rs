//! `/workmate stop|mode|model`: commands on one session, wherever they are typed.
//!
//! Invariants: in a thread (`@workmate /workmate stop`), a command acts on that thread's session;
//! a native slash command, which carries no thread, acts on the caller's latest session of a
//! direct chat, and in a channel lists the caller's running sessions there, each with a Stop
//! button; only the session's owner or an admin changes a session; anyone may look.

use std::fmt::Write as _;

use workmate_cards::{Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText};
use workmate_protocol::{Command, EventKind, TenantId, TurnId};
use workmate_store::{Role, SessionKey, SessionRecord};

use super::{Caller, Outcome, role_name};
use crate::identity::Person;
use crate::{Chat, Result};

/// Recent events read to find the running turn's id.
const RECENT_EVENTS: u32 = 500;
/// Sessions of a channel listed at most.
const LISTED: u32 = 50;

/// What a session command does once the session is known.
pub(crate) enum Change {
    /// Only report (any caller may look).
    Show(String),
    /// Submit the command; the text says what was done.
    Apply(Command, String),
}

/// Why `person` may not change `session`, if they may not.
pub(crate) fn may_change(person: &Person, session: &SessionRecord) -> Option<String> {
    (session.owner != person.user.id && person.role() != Role::Admin).then(|| {
        format!(
            "Only the conversation's owner ({}) or an admin may do that; you are {}.",
            session.owner,
            role_name(person.role())
        )
    })
}

impl Chat {
    /// The id of the turn running in the session, if one runs.
    pub(crate) async fn running_turn(
        &self,
        tenant: &TenantId,
        session: &SessionRecord,
    ) -> Result<Option<TurnId>> {
        if !self.hub().is_running(tenant, &session.id).await? {
            return Ok(None);
        }
        let after = session.last_seq.saturating_sub(u64::from(RECENT_EVENTS));
        let events = self
            .store()
            .events()
            .list_after(tenant, &session.id, after, RECENT_EVENTS)
            .await?;
        Ok(events
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EventKind::TurnStart { .. }))
            .and_then(|e| e.turn_id.clone()))
    }

    /// The session of the thread the caller typed in, if it has one.
    pub(crate) async fn thread_session_of(&self, caller: &Caller) -> Result<Option<SessionRecord>> {
        let Some(thread) = &caller.thread_id else {
            return Ok(None);
        };
        let key = SessionKey {
            surface: caller.session_surface(),
            chat_id: caller.chat_id.clone(),
            thread_id: thread.clone(),
        };
        Ok(self
            .store()
            .sessions()
            .find_by_key(&caller.person.tenant, &key)
            .await?)
    }

    /// Runs a session command where the caller typed it.
    pub(crate) async fn on_session(
        &self,
        caller: &Caller,
        is_stop: bool,
        change: impl FnOnce(&SessionRecord) -> Change,
    ) -> Result<Outcome> {
        let session = match (&caller.thread_id, caller.direct) {
            (Some(_), _) => {
                let Some(session) = self.thread_session_of(caller).await? else {
                    return Ok(Outcome::refused(
                        "No workmate conversation in this thread yet: mention workmate to start one.",
                    ));
                };
                session
            }
            (None, true) => {
                let mine = self.sessions_here(caller, 1).await?;
                let Some(session) = mine.into_iter().next() else {
                    return Ok(Outcome::refused(
                        "You have no conversation with workmate here yet: send it a message first.",
                    ));
                };
                session
            }
            (None, false) if is_stop => return self.stop_list(caller).await,
            (None, false) => {
                return Ok(Outcome::refused(
                    "A channel has many conversations, and a slash command does not say which. \
                     Type the command inside the conversation's thread, after mentioning \
                     workmate: `@workmate /workmate mode plan`.",
                ));
            }
        };
        let (command, done) = match change(&session) {
            Change::Show(text) => {
                return Ok(Outcome::ok(format!("{text}.")).in_session(&session.id));
            }
            Change::Apply(command, done) => (command, done),
        };
        if let Some(why) = may_change(&caller.person, &session) {
            return Ok(Outcome::refused(why).in_session(&session.id));
        }
        let outcome = match self
            .hub()
            .submit(&caller.person.tenant, &session.id, command)
            .await
        {
            Ok(_) => Outcome::ok(format!("Done: {done}.")),
            Err(
                e @ (workmate_engine::Error::Busy(_)
                | workmate_engine::Error::Forbidden(_)
                | workmate_engine::Error::Rejected(_)),
            ) => Outcome::refused(format!("Refused: {e}.")),
            Err(e) => return Err(e.into()),
        };
        Ok(outcome.in_session(&session.id))
    }

    /// The caller's sessions in the chat they typed in, most recent first.
    async fn sessions_here(&self, caller: &Caller, limit: u32) -> Result<Vec<SessionRecord>> {
        Ok(self
            .store()
            .sessions()
            .list_in_chat(
                &caller.person.tenant,
                caller.session_surface(),
                &caller.chat_id,
                &caller.person.user.id,
                limit,
            )
            .await?)
    }

    /// The caller's running sessions in this channel, each with a Stop button.
    async fn stop_list(&self, caller: &Caller) -> Result<Outcome> {
        let mut running = Vec::new();
        for session in self.sessions_here(caller, LISTED).await? {
            if let Some(turn) = self.running_turn(&caller.person.tenant, &session).await? {
                running.push((session, turn));
            }
        }
        if running.is_empty() {
            return Ok(Outcome::ok(
                "None of your conversations in this channel is running a turn.",
            ));
        }
        let mut text = String::from("Your running conversations in this channel:");
        let mut blocks = vec![Block::Text(RichText(vec![Inline::Text(text.clone())]))];
        for (session, turn) in running {
            let title = session
                .title
                .clone()
                .unwrap_or_else(|| format!("thread {}", session.key.thread_id));
            let _ = write!(text, "\n• {title}");
            blocks.push(Block::Text(RichText(vec![Inline::Bold(title)])));
            blocks.push(Block::Actions(vec![Button {
                label: "Stop".into(),
                action: ButtonAction::Stop {
                    session_id: session.id.clone(),
                    turn_id: turn,
                },
                style: ButtonStyle::Danger,
            }]));
        }
        Ok(Outcome::ok(text).with_card(Card { blocks }))
    }
}
