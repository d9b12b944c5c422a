//! Clicks answered in their own response: a toast for the clicker and the card as it is now
//! (Feishu and DingTalk card callbacks, WeCom template-card events must be answered within
//! 2–5 s, and a response without the new card leaves the click looking lost).
//!
//! Invariants: the click is stored (claimed) before it runs, so a click delivered twice is
//! applied once; it runs through the same authority checks as every other answer; the card
//! returned is folded from the session's stored events after the answer was stored, so it shows
//! exactly what everyone else's copy will show once the card pump updates it; a refused click
//! returns no card, so nothing on screen changes.

use workmate_adapter::{ClickReply, Inbound, InboundKind, ToastKind};
use workmate_cards::{ButtonAction, CardRef, PromptState, SessionView, card_for};
use workmate_protocol::{Actor, InboxItemId, Resolution, SessionId, TenantId};
use workmate_store::ResolveOutcome;

use crate::identity::Person;
use crate::{Chat, ChatError, Result};

/// Events read per page when folding a session for a click's card.
const PAGE: u32 = 500;

impl Chat {
    /// Runs a card click now and says what its response shows. A click delivered again is
    /// not applied twice. An error means the click was not stored: the platform shows its own
    /// error and the person may click again.
    pub async fn click_now(&self, inbound: Inbound) -> Result<ClickReply> {
        let InboundKind::Click { action } = &inbound.kind else {
            return Err(ChatError::Unreadable("not a click".into()));
        };
        if self.inner.stop.is_cancelled() {
            return Err(ChatError::ShuttingDown);
        }
        let Some(key) = crate::intake::table::accept_claimed(self, &inbound).await? else {
            return Ok(toast(ToastKind::Info, "This click was already received."));
        };
        let outcome = async {
            let slot = self.slot(inbound.surface)?;
            let person = self.person(&slot, &inbound).await?;
            match action {
                ButtonAction::Resolve {
                    item_id,
                    resolution,
                } => self.answer_now(&slot, &person, item_id, resolution).await,
                ButtonAction::Stop {
                    session_id,
                    turn_id,
                } => Ok(
                    match self.stop_button(&person, session_id, turn_id).await? {
                        Some(why) => toast(ToastKind::Warning, &why),
                        None => toast(ToastKind::Info, "Stopping…"),
                    },
                ),
            }
        }
        .await;
        let outcome = match outcome {
            Err(ChatError::Deactivated(_)) => {
                Ok(toast(ToastKind::Error, crate::error::DEACTIVATED))
            }
            other => other,
        };
        let intake = self.store().intake();
        match &outcome {
            Ok(_) => intake.finish(&key).await?,
            Err(e) => intake.fail(&key, &e.to_string()).await?,
        }
        outcome
    }

    async fn answer_now(
        &self,
        slot: &crate::handle::Slot,
        person: &Person,
        item_id: &InboxItemId,
        resolution: &Resolution,
    ) -> Result<ClickReply> {
        let tenant = &person.tenant;
        let Some(item) = self.store().inbox().get(tenant, item_id).await? else {
            return Ok(toast(ToastKind::Warning, "This request no longer exists."));
        };
        // The item's cards must be live, so everyone else's copy shows the answer too.
        self.show_session(tenant, &item.session_id).await?;
        let outcome = self
            .hub()
            .resolve(
                tenant,
                item_id,
                resolution,
                &person.actor(),
                slot.platform.surface(),
            )
            .await;
        let mine = match outcome {
            Ok(ResolveOutcome::Resolved(_)) => true,
            Ok(ResolveOutcome::AlreadyResolved(_)) => false,
            Ok(ResolveOutcome::Counted {
                approvals,
                required,
                ..
            }) => {
                let (card, _) = self.prompt_card(tenant, &item.session_id, item_id).await?;
                return Ok(ClickReply {
                    kind: ToastKind::Success,
                    toast: counted_toast(approvals.len(), required),
                    card,
                });
            }
            Ok(_) => return Ok(toast(ToastKind::Warning, "This request no longer exists.")),
            Err(workmate_engine::Error::Forbidden(why) | workmate_engine::Error::Rejected(why)) => {
                // The card as it is, so a platform without toasts can show the clicker alone
                // why (see `ClickReply::refused_card`).
                let (card, _) = self.prompt_card(tenant, &item.session_id, item_id).await?;
                return Ok(ClickReply {
                    kind: ToastKind::Error,
                    toast: why,
                    card,
                });
            }
            Err(e) => return Err(e.into()),
        };
        let (card, decided) = self.prompt_card(tenant, &item.session_id, item_id).await?;
        let Some((by, answer)) = decided else {
            return Ok(ClickReply {
                kind: ToastKind::Success,
                toast: "Answered.".into(),
                card,
            });
        };
        let by_me = by.user_id == person.user.id;
        let (kind, text) = if mine || by_me {
            (ToastKind::Success, outcome_word(&answer).to_owned())
        } else {
            (
                ToastKind::Warning,
                format!("Already {} by {}.", past_tense(&answer), name(&by)),
            )
        };
        Ok(ClickReply {
            kind,
            toast: text,
            card,
        })
    }

    /// An item's card as the session's stored events show it now, and who answered it how.
    async fn prompt_card(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        item: &InboxItemId,
    ) -> Result<(Option<workmate_cards::Card>, Option<(Actor, Resolution)>)> {
        self.hub().flushed(tenant, session).await?;
        let mut view = SessionView::default();
        let mut after = 0;
        loop {
            let page = self
                .store()
                .events()
                .list_after(tenant, session, after, PAGE)
                .await?;
            for event in &page {
                view.apply(event);
            }
            match page.last() {
                Some(last) if page.len() >= PAGE as usize => after = last.seq,
                _ => break,
            }
        }
        let state = view
            .approval(item)
            .map(|a| &a.state)
            .or_else(|| view.question(item).map(|q| &q.state))
            .or_else(|| view.plan(item).map(|p| &p.state));
        let decided = match state {
            Some(PromptState::Resolved { by, resolution, .. }) => {
                Some((by.clone(), resolution.clone()))
            }
            _ => None,
        };
        let card = card_for(&view, &CardRef::Approval(item.clone()))
            .or_else(|| card_for(&view, &CardRef::Question(item.clone())))
            .or_else(|| card_for(&view, &CardRef::Plan(item.clone())))
            .map(|(_, card)| card);
        Ok((card, decided))
    }
}

fn toast(kind: ToastKind, text: &str) -> ClickReply {
    ClickReply {
        kind,
        toast: text.to_owned(),
        card: None,
    }
}

fn name(actor: &Actor) -> &str {
    actor.name.as_deref().unwrap_or(actor.user_id.as_str())
}

/// The toast of an answer that won.
fn outcome_word(resolution: &Resolution) -> &'static str {
    match resolution {
        Resolution::Approval { choice } if choice.allows() => "Approved.",
        Resolution::Approval { .. } => "Denied.",
        Resolution::Plan { approved: true, .. } => "Plan approved.",
        Resolution::Plan { .. } => "Plan rejected.",
        _ => "Answered.",
    }
}

/// How an earlier answer is told: "already approved by …".
fn past_tense(resolution: &Resolution) -> &'static str {
    match resolution {
        Resolution::Approval { choice } if choice.allows() => "approved",
        Resolution::Approval { .. } => "denied",
        Resolution::Plan { approved: true, .. } => "approved",
        Resolution::Plan { .. } => "rejected",
        _ => "answered",
    }
}

/// What an approval counted towards a quorum tells the approver.
pub(crate) fn counted_toast(count: usize, required: u32) -> String {
    let left = (required as usize).saturating_sub(count);
    let more = if left == 1 { "approval" } else { "approvals" };
    format!("Approval counted ({count} of {required}); {left} more {more} needed.")
}
