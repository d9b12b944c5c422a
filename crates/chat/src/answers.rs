//! Answers from chat: button clicks and replies that quote a reply token.
//!
//! Invariants: every answer goes through the engine's resolver, which checks the answerer's
//! authority the same way for a click, a reply and the HTTP API; a refusal is told to the person
//! who answered, privately, with the reason; a click delivered again after a crash, whose answer
//! already won, is not reported as lost; a Stop button stops only the turn it was shown on.

use workmate_adapter::ChatTarget;
use workmate_cards::ButtonAction;
use workmate_protocol::{Command, InboxItemId, Resolution, SessionId, TurnId};
use workmate_store::ResolveOutcome;

use crate::handle::Slot;
use crate::identity::Person;
use crate::notify::private;
use crate::text::text_card;
use crate::{Chat, Result};

impl Chat {
    /// Runs a button click.
    pub(crate) async fn click(
        &self,
        slot: &Slot,
        person: &Person,
        target: &ChatTarget,
        action: &ButtonAction,
    ) -> Result<()> {
        let refusal = match action {
            ButtonAction::Resolve {
                item_id,
                resolution,
            } => self.resolve(slot, person, item_id, resolution).await?,
            ButtonAction::Stop {
                session_id,
                turn_id,
            } => self.stop_button(person, session_id, turn_id).await?,
        };
        if let Some(why) = refusal {
            private(slot, target, person, &text_card(&why)).await;
        }
        Ok(())
    }

    /// Answers an item; the refusal to tell, if any.
    async fn resolve(
        &self,
        slot: &Slot,
        person: &Person,
        item_id: &InboxItemId,
        resolution: &Resolution,
    ) -> Result<Option<String>> {
        // The item's cards must be live to show the answer.
        if let Some(item) = self.store().inbox().get(&person.tenant, item_id).await? {
            self.show_session(&person.tenant, &item.session_id).await?;
        }
        let outcome = self
            .hub()
            .resolve(
                &person.tenant,
                item_id,
                resolution,
                &person.actor(),
                slot.platform.surface(),
            )
            .await;
        refusal_of(outcome, person)
    }

    /// Answers the item a reply's token names.
    pub(crate) async fn answer_reply(
        &self,
        slot: &Slot,
        person: &Person,
        target: &ChatTarget,
        text: &str,
    ) -> Result<()> {
        let outcome = self
            .hub()
            .resolve_reply(
                &person.tenant,
                text,
                &person.actor(),
                slot.platform.surface(),
            )
            .await;
        let refusal = match outcome {
            Ok(None) => None,
            Ok(Some(ResolveOutcome::Resolved(item))) => {
                self.show_session(&person.tenant, &item.session_id).await?;
                None
            }
            Ok(Some(other)) => refusal_of(Ok(other), person)?,
            Err(e) => refusal_of(Err(e), person)?,
        };
        if let Some(why) = refusal {
            private(slot, target, person, &text_card(&why)).await;
        }
        Ok(())
    }

    /// A Stop button: stops the turn it was shown on, for the session's owner or an admin.
    pub(crate) async fn stop_button(
        &self,
        person: &Person,
        session: &SessionId,
        turn: &TurnId,
    ) -> Result<Option<String>> {
        let Some(record) = self.store().sessions().get(&person.tenant, session).await? else {
            return Ok(Some("This conversation no longer exists.".into()));
        };
        if let Some(why) = crate::commands::may_change(person, &record) {
            return Ok(Some(why));
        }
        // The turn card must be live to show that the turn stopped.
        self.show_session(&person.tenant, session).await?;
        if self.running_turn(&person.tenant, &record).await?.as_ref() != Some(turn) {
            return Ok(Some("That turn has already ended.".into()));
        }
        let stop = Command::Interrupt {
            actor: person.actor(),
        };
        match self.hub().submit(&person.tenant, session, stop).await {
            Ok(_) => Ok(None),
            Err(
                e @ (workmate_engine::Error::Forbidden(_) | workmate_engine::Error::Rejected(_)),
            ) => Ok(Some(format!("Not stopped: {e}."))),
            Err(e) => Err(e.into()),
        }
    }
}

/// What to tell the person after an answer, if anything.
fn refusal_of(
    outcome: workmate_engine::Result<ResolveOutcome>,
    person: &Person,
) -> Result<Option<String>> {
    match outcome {
        Ok(ResolveOutcome::Resolved(_)) => Ok(None),
        // The same answer delivered again (a click retried after a crash) won already.
        Ok(ResolveOutcome::AlreadyResolved(item))
            if item.resolved_by.as_ref() == Some(&person.user.id) =>
        {
            Ok(None)
        }
        Ok(ResolveOutcome::AlreadyResolved(item)) => Ok(Some(match item.resolved_by {
            Some(by) => format!("This was already answered by {by}."),
            None => "This was already answered.".into(),
        })),
        Ok(ResolveOutcome::Counted {
            approvals,
            required,
            ..
        }) => Ok(Some(crate::clicks::counted_toast(
            approvals.len(),
            required,
        ))),
        Ok(ResolveOutcome::NotFound) => Ok(Some("This request no longer exists.".into())),
        Err(workmate_engine::Error::Forbidden(why) | workmate_engine::Error::Rejected(why)) => {
            Ok(Some(why))
        }
        Err(e) => Err(e.into()),
    }
}
